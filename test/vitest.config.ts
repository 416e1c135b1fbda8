import { defineConfig } from "vitest/config";

/**
 * Tests that drive real outside tools (a Kubernetes control plane, podman,
 * Jaeger, Toxiproxy) load both cores for minutes. They run as a second
 * group, after every other file, so the timing-sensitive tests (rate-limit
 * windows over Redis with a 500 ms command timeout, embedded PGlite in the
 * same worker) never share the machine with them.
 */
const REAL_TOOLS = [
  "test/helm_test.ts",
  "test/image_test.ts",
  "test/telemetry_jaeger_test.ts",
  "test/faults/**/*_test.ts",
];

const EXCLUDE = ["**/node_modules/**", "services/lib/gen/**", "widget/dist/**"];

export default defineConfig({
  root: new URL("..", import.meta.url).pathname,
  test: {
    // DATABASE_URL and REDIS_URL, when set, must answer: the run fails otherwise.
    globalSetup: ["test/global_setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores on CI: more parallel files only fight over them.
    maxWorkers: 2,
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "suite",
          include: [
            "services/**/*_test.ts",
            "widget/**/*_test.ts",
            "dashboard/**/*_test.ts",
            "test/**/*_test.ts",
          ],
          exclude: [...EXCLUDE, ...REAL_TOOLS],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "real tools",
          include: REAL_TOOLS,
          exclude: EXCLUDE,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
