/**
 * `deno task start [--seed FILE]`: the whole system in one process, with the
 * bundled demo site on first start. Prints `gateway listening on ...` once
 * every service answers its health check.
 */
import { userPath } from "./user_path.ts";
import { parseArgs } from "node:util";
import { demoKeys, startSystem } from "./system.ts";
import { servicesHealth } from "../gateway/health.ts";
import { serviceClient } from "../lib/rpc/client.ts";
import { Health } from "../lib/gen/grpc/health/v1/health_pb.ts";
import { fail, runProcess } from "./run_process.ts";

await runProcess({
  mode: "start",
  failedAs: "start failed",
  serviceName: "crm",
  portSettings: "PORT, AUTH_URL, CONTENT_URL and INGEST_URL choose the ports",
  async start(config, log) {
    const { values } = parseArgs({
      args: Deno.args,
      options: { seed: { type: "string" } },
      strict: true,
    });
    const seed = values.seed === undefined
      ? undefined
      : await Deno.readTextFile(userPath(values.seed, Deno.env.get("INIT_CWD"))).catch((e) =>
        fail(`cannot read ${values.seed}: ${e.message}`)
      );
    const system = await startSystem(config, {
      log,
      seed,
      demo: true,
      demoPage: true,
      ingestThread: config.ingestThread,
    });

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
      console.log(
        `  content:     curl -H 'x-crm-key: ${keys.siteKey}' ${url}/content/v1/pages/home`,
      );
    }
    if (system.demoPageUrl) console.log(`  demo page:   ${system.demoPageUrl}`);
    if (system.demoLoaded || system.demoPageUrl) {
      const { reportKey } = await demoKeys();
      console.log(`  dashboard:   ${url}/dashboard/ (report key ${reportKey})`);
    }
    console.log(`gateway listening on ${url}`);
    return system;
  },
});
