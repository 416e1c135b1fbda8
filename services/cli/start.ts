/**
 * `deno task start [--seed FILE]`: the whole system in one process, with the
 * bundled demo site on first start. Prints `gateway listening on ...` once
 * every service answers its health check.
 */
import { userPath } from "./user_path.ts";
import { relaunchWithOtel } from "./otel_runtime.ts";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../lib/config.ts";
import { describeError } from "../lib/errors.ts";
import { ManifestError } from "../lib/manifest/validate.ts";
import { createLogger } from "../lib/log.ts";
import { demoKeys, startSystem } from "./system.ts";
import { servicesHealth } from "../gateway/health.ts";
import { serviceClient } from "../lib/rpc/client.ts";
import { Health } from "../lib/gen/grpc/health/v1/health_pb.ts";

function fail(message: string): never {
  console.error(message);
  Deno.exit(1);
}

async function main() {
  // With an OTLP endpoint set, the run happens in a child with Deno's exporter on.
  const relaunched = await relaunchWithOtel();
  if (relaunched !== undefined) Deno.exit(relaunched);
  const { values } = parseArgs({
    args: Deno.args,
    options: { seed: { type: "string" } },
    strict: true,
  });
  const config = loadConfig(Deno.env.toObject(), "start");
  const log = createLogger(config.logLevel);
  const seed = values.seed === undefined
    ? undefined
    : await Deno.readTextFile(userPath(values.seed, Deno.env.get("INIT_CWD"))).catch((e) =>
      fail(`cannot read ${values.seed}: ${e.message}`)
    );
  const system = await startSystem(config, { log, seed, demo: true, demoPage: true });

  const health = {
    auth: serviceClient(Health, system.config.authUrl),
    content: serviceClient(Health, system.config.contentUrl),
    ingest: serviceClient(Health, system.config.ingestUrl),
  };
  for (let attempt = 0;; attempt++) {
    const statuses = await servicesHealth(health);
    if (Object.values(statuses).every((s) => s === "SERVING")) break;
    if (attempt > 100) fail(`services did not become ready: ${JSON.stringify(statuses)}`);
    await new Promise((r) => setTimeout(r, 100));
  }

  const url = system.gateway.url;
  if (system.seeded && !system.demoLoaded) {
    console.log(`seeded site "${system.seeded.site}" from ${values.seed}`);
  }
  if (system.demoLoaded) {
    const keys = await demoKeys();
    console.log(`demo site "demo" loaded (Nordlicht Coffee Roasters, en and de)`);
    console.log(`  site key:    ${keys.siteKey}`);
    console.log(`  secret key:  ${keys.secretKey}`);
    console.log(`  content:     curl -H 'x-crm-key: ${keys.siteKey}' ${url}/content/v1/pages/home`);
  }
  if (system.demoPageUrl) console.log(`  demo page:   ${system.demoPageUrl}`);
  console.log(`gateway listening on ${url}`);

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down");
    await system.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}

main().catch((error) => {
  if (error instanceof ConfigError) fail(`configuration: ${error.message}`);
  if (error instanceof ManifestError) fail(`invalid manifest at ${error.path}: ${error.problem}`);
  const inUse = error instanceof Deno.errors.AddrInUse ||
    (error as { code?: string })?.code === "EADDRINUSE";
  const hint = inUse
    ? " (is another instance running? PORT, AUTH_URL, CONTENT_URL and INGEST_URL choose the ports)"
    : "";
  fail(`start failed: ${describeError(error)}${hint}`);
});
