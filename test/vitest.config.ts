import { defineConfig } from "vitest/config";

/**
 * The test levels (docs/development.md, "Test levels"):
 *
 * - unit: pure logic, handlers as plain objects and through Connect's
 *   in-memory transport, storage modules on PGlite and Postgres; beside the
 *   code they test.
 * - integration: the whole system in this process on ephemeral ports, driven
 *   over HTTP and gRPC as clients drive it (`test/`).
 * - system: tests whose subject is a separate process or a real outside tool:
 *   the commands as a user runs them, crashes and restarts, a Kubernetes
 *   control plane, podman, Jaeger, Toxiproxy. They load both cores for
 *   minutes and wait on real time (a 30 s outage is 30 s), so they run on
 *   their own: `deno task test:system`, which CI runs after `deno task test`.
 */
const SYSTEM = [
  "test/commands_test.ts",
  "test/embedded_crash_test.ts",
  "test/ingest_crash_test.ts",
  "test/manifest_import_interrupted_test.ts",
  "test/otel_export_test.ts",
  "test/secrets_in_output_test.ts",
  "test/service_admin_token_test.ts",
  "test/system/**/*_test.ts",
  "test/helm_test.ts",
  "test/alert_rules_test.ts",
  "test/telemetry_queries_test.ts",
  "test/image_test.ts",
  "test/telemetry_jaeger_test.ts",
  "test/faults/**/*_test.ts",
];

/**
 * node: the chart on a real Kubernetes node on this machine (root, and the
 * node's tools of .ci/tools.sh): `deno task test:system` runs it after the
 * system files, alone (it sets the host's iptables, bridge and sysctls);
 * `deno task test:node` runs only it.
 */
const NODE = ["test/realnode_test.ts"];

const UNIT = [
  "services/**/*_test.ts",
  "widget/**/*_test.ts",
  "dashboard/**/*_test.ts",
  "dashboard/**/*_test.tsx",
  "test/bench/*_test.ts",
  "test/fuzz/parsers_test.ts",
  "test/helpers/*_test.ts",
  "test/ci_audit_test.ts",
  "test/docs_test.ts",
  "clients/typescript/test/generated_test.ts",
];

const EXCLUDE = ["**/node_modules/**", "services/lib/gen/**", "widget/dist/**"];

export default defineConfig({
  root: new URL("..", import.meta.url).pathname,
  // The dashboard's components are Preact JSX (as deno.json's compilerOptions say for Deno).
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
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
        test: { name: "unit", include: UNIT, exclude: EXCLUDE },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*_test.ts"],
          // Every answer of a gateway is checked against its OpenAPI document.
          setupFiles: ["test/openapi_setup.ts"],
          exclude: [...EXCLUDE, ...UNIT, ...SYSTEM, ...NODE],
        },
      },
      {
        extends: true,
        test: {
          name: "system",
          include: [...SYSTEM, "clients/typescript/test/client_test.ts"],
          exclude: EXCLUDE,
          setupFiles: ["test/openapi_setup.ts"],
        },
      },
      {
        extends: true,
        test: { name: "node", include: NODE, exclude: EXCLUDE },
      },
    ],
  },
});
