import { defineConfig } from "vitest/config";

export default defineConfig({
  root: new URL("..", import.meta.url).pathname,
  test: {
    include: [
      "services/**/*_test.ts",
      "widget/**/*_test.ts",
      "dashboard/**/*_test.ts",
      "test/**/*_test.ts",
    ],
    exclude: ["**/node_modules/**", "services/lib/gen/**", "widget/dist/**"],
    // DATABASE_URL and REDIS_URL, when set, must answer: the run fails otherwise.
    globalSetup: ["test/global_setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores on CI: more parallel files only fight over them.
    maxWorkers: 2,
    reporters: ["default"],
  },
});
