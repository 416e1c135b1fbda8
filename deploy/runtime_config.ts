/**
 * Image build step: rewrites deno.json in the build stage without the
 * packages only development needs (the test runner, the browser driver, the
 * protobuf tool chain), so `deno install` bakes in what the services run and
 * nothing else. Versions stay as deno.json pins them; the lockfile still
 * holds every transitive version.
 */
const DEVELOPMENT_ONLY = [
  "vitest",
  "playwright-core",
  "@bufbuild/buf",
  "@bufbuild/protoc-gen-es",
  "@grpc/grpc-js",
  "yaml",
  "fast-check",
  "axe-core",
  "preact-render-to-string",
  // The OpenAPI document's checks and the typed client's generator, the dashboards' builder,
  // the independent webhook verifier: tests and build tasks only.
  "ajv",
  "ajv/",
  "ajv-formats",
  "openapi-fetch",
  "openapi-typescript",
  "@grafana/grafana-foundation-sdk",
  "standardwebhooks",
];
// uplot, preact and @preact/signals stay: the dashboard's build bundles them in this stage.

const config = JSON.parse(await Deno.readTextFile("deno.json"));
for (const name of DEVELOPMENT_ONLY) delete config.imports[name];
delete config.tasks;
await Deno.writeTextFile("deno.json", JSON.stringify(config, null, 2) + "\n");
