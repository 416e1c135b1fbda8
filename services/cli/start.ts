/**
 * `deno task start [--seed FILE]`: the whole system in one process, with the
 * bundled demo site on first start. Prints `gateway listening on ...` once
 * the gateway is ready (every service has answered its health check).
 */
import { userPath } from "./user_path.ts";
import { parseArgs } from "node:util";
import { demoKeys, startSystem, type SystemOptions } from "./system.ts";
import { fail, runProcess, say } from "./run_process.ts";

/**
 * Runs the system as `deno task start` does; a benchmark's own entry point
 * (test/bench/) may add ingest-service's in-process options.
 */
export async function startCommand(extra: Pick<SystemOptions, "ingest"> = {}): Promise<void> {
  await runProcess({
    mode: "start",
    failedAs: "start failed",
    serviceName: "crm",
    portSettings: "PORT, AUTH_URL, CONTENT_URL and INGEST_URL choose the ports",
    servesGateway: true,
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
        ...extra,
      });

      // Ready as a cluster's gateway is: its /healthz answers 200 once auth has
      // answered its health check SERVING (every service is serving by now).
      for (let attempt = 0;; attempt++) {
        const answer = await fetch(`${system.gateway.url}/healthz`);
        const body = await answer.json();
        if (answer.status === 200) break;
        if (attempt > 100) fail(`services did not become ready: ${JSON.stringify(body.services)}`);
        await new Promise((r) => setTimeout(r, 100));
      }

      const url = system.gateway.url;
      if (system.seeded && !system.demoLoaded) {
        say(`seeded site "${system.seeded.site}" from ${values.seed}`);
      }
      if (system.demoLoaded) {
        const keys = await demoKeys();
        say(`demo site "demo" loaded (Nordlicht Coffee Roasters, en and de)`);
        say(`  site key:    ${keys.siteKey}`);
        say(`  secret key:  ${keys.secretKey}`);
        say(
          `  content:     curl -H 'x-crm-key: ${keys.siteKey}' ${url}/content/v1/pages/home`,
        );
      }
      if (system.demoPageUrl) say(`  demo page:   ${system.demoPageUrl}`);
      if (system.demoLoaded || system.demoPageUrl) {
        const { reportKey } = await demoKeys();
        say(`  dashboard:   ${url}/dashboard/ (report key ${reportKey})`);
      }
      say(`gateway listening on ${url}`);
      return system;
    },
  });
}

if (import.meta.main) await startCommand();
