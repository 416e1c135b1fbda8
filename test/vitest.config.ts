import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { defineConfig } from "vitest/config";
import LongestFirst from "./helpers/longest_first.ts";

/**
 * The test levels (docs/development.md, "Test levels"):
 *
 * - unit: pure logic, handlers as plain objects and through Connect's
 *   in-memory transport; beside the code they test, and each file's tests
 *   within 2 s (CI fails a slower one: CRM_UNIT_FILE_LIMIT_MS).
 * - integration: the whole system in this process on ephemeral ports, driven
 *   over HTTP and gRPC as clients drive it (`test/`); and the files beside
 *   the code that open a database, a socket server or the system (storage
 *   modules on PGlite and Postgres, services with their store), whose time
 *   is their storage's.
 * - system: tests whose subject is a separate process or a real outside tool:
 *   the commands as a user runs them, crashes and restarts, a Kubernetes
 *   control plane, podman, Jaeger, Toxiproxy, and the user's flows in
 *   Chromium. They load both cores for minutes and wait on real time (a 30 s
 *   outage is 30 s), so they run on their own: `deno task test:system`, which
 *   CI runs after `deno task test`.
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
  "test/helm_wiring_test.ts",
  "test/alert_rules_test.ts",
  "test/telemetry_queries_test.ts",
  "test/image_test.ts",
  "test/telemetry_jaeger_test.ts",
  "test/faults/**/*_test.ts",
  // The widget's and the dashboard's flows in Chromium (test/demo_page_test.ts stays in
  // `deno task test`: the widget on a real page in Chromium, from consent to a lead).
  "test/**/*_browser_test.ts",
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
  "test/helpers/*_test.ts",
  "test/ci_audit_test.ts",
  "test/docs_test.ts",
  "clients/typescript/test/generated_test.ts",
];

const EXCLUDE = ["**/node_modules/**", "services/lib/gen/**", "widget/dist/**"];

/** The unit files under test/, which the integration-level projects leave out. */
const UNIT_UNDER_TEST = UNIT.filter((glob) => glob.startsWith("test/"));

const ROOT = new URL("..", import.meta.url).pathname;

/** Test files under `dir` whose text passes `keep`. */
function testFilesUnder(dir: string, keep: (text: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(ROOT + dir, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name !== "node_modules" && entry.name !== "gen") walk(path);
      } else if (
        /_test\.tsx?$/.test(entry.name) && keep(readFileSync(ROOT + path, "utf8"))
      ) found.push(path);
    }
  };
  walk(dir);
  return found.sort();
}

/**
 * The files beside the code that run with the integration level: they open
 * a database (the storage, in-memory service or traffic helpers), the system,
 * or real socket servers, or run a code generator. Found by what they import, so a new one moves by
 * itself; the unit level keeps what runs in memory.
 */
const WITH_STORAGE =
  /test\/helpers\/(storage|in_memory|system|stats_traffic|engine_questions)\.ts"/;
const INTEGRATION_BESIDE_THE_CODE = [
  ...testFilesUnder("services", (text) => WITH_STORAGE.test(text)),
  // HTTP/1.1 servers fed large requests over real sockets, byte by byte.
  "services/lib/rpc/server_test.ts",
  "services/lib/rpc/front_door_test.ts",
  // openapi-typescript making the client's types again from the document: over a second.
  "clients/typescript/test/generated_test.ts",
];

/**
 * The test files that start the system (or, for the engine's matrix, a
 * store) once per storage of the run (`SYSTEM_STORAGES`,
 * test/helpers/env.ts). `deno task test` runs them on one storage; the
 * project "storages" of `deno task test:system` runs them on the others, so
 * together they cover both. Found by what they use, not by name, so a new
 * such file lands in both runs by itself.
 */
function perStorageFiles(): string[] {
  const uses = (text: string) => text.includes("SYSTEM_STORAGES");
  return [...testFilesUnder("test", uses), ...testFilesUnder("services", uses)]
    .filter((path) => !path.startsWith("test/helpers/"));
}

/** Postgres is configured: the storages project has a second storage to run on. */
const POSTGRES = Boolean(process.env.DATABASE_URL);

export default defineConfig({
  root: ROOT,
  // The dashboard's components are Preact JSX (as deno.json's compilerOptions say for Deno).
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  test: {
    // DATABASE_URL and REDIS_URL, when set, must answer: the run fails otherwise.
    globalSetup: ["test/global_setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // `expect.poll` waits for what a system does in its own time (a page's script, a batch
    // written); vitest's default of 1 s failed a passing page on two loaded cores.
    expect: { poll: { timeout: 10_000 } },
    // Two cores on CI. The system files load both cores and wait on real time: two at a time.
    // `deno task test` asks for 4 (deno.json): its longest files, which start first, wait on
    // timers, a mail server and Chromium, and the other workers fill the cores meanwhile. On two
    // quiet cores it took 67 to 73 s with 4 workers, 77 to 80 s with 3, 68 s with 5 and 73 s
    // with 6 (more workers load more module graphs); on cores 1.5 times slower, 3 and 4 were even.
    maxWorkers: 2,
    // Every run ends with its slowest files; .ci/run also records each file's time and fails a
    // unit-test file over 2 s (test/helpers/durations_reporter.ts).
    reporters: ["default", ROOT + "test/helpers/durations_reporter.ts"],
    // The longest files first, also in a checkout that never ran (helpers/longest_first.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          // One module graph per worker, as for integration below.
          isolate: false,
          include: UNIT,
          exclude: [...EXCLUDE, ...INTEGRATION_BESIDE_THE_CODE],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          // A worker runs its files one after another in one module graph: the system's modules
          // load once per worker, not once per file (their import took 230 s of the level's
          // 1,030 s of file time). Each file still starts its own systems, on databases and ports
          // of their own. The system levels do the same.
          isolate: false,
          include: ["test/**/*_test.ts", ...INTEGRATION_BESIDE_THE_CODE],
          // Every answer of a gateway is checked against its OpenAPI document.
          setupFiles: ["test/openapi_setup.ts"],
          exclude: [...EXCLUDE, ...UNIT_UNDER_TEST, ...SYSTEM, ...NODE],
        },
      },
      {
        extends: true,
        test: {
          name: "system",
          // One graph per worker too: their subjects are processes and outside tools, which each
          // file starts and stops itself, and the browser flows' systems load PGlite once.
          isolate: false,
          include: [...SYSTEM, "clients/typescript/test/client_test.ts"],
          exclude: EXCLUDE,
          setupFiles: ["test/openapi_setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "storages",
          // The integration files again, on the other storage: one module graph per worker, as there.
          isolate: false,
          include: POSTGRES ? perStorageFiles() : [],
          exclude: [...EXCLUDE, ...UNIT_UNDER_TEST, ...SYSTEM, ...NODE],
          setupFiles: ["test/openapi_setup.ts"],
          env: { CRM_TEST_STORAGES: "others" },
        },
      },
      {
        extends: true,
        test: { name: "node", include: NODE, exclude: EXCLUDE },
      },
    ],
  },
});
