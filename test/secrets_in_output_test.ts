/**
 * Keys, secret keys and full client addresses never appear in what the
 * system writes: `deno task start` runs as a user runs it, at the most
 * talkative log level and with OpenTelemetry export on (to a stand-in
 * collector that keeps every byte it is sent: traces, metrics and logs),
 * takes traffic carrying known keys (valid and not) and known IPv4 and IPv6
 * addresses, and the admin command line exports what was stored; then every
 * byte written (stdout, stderr, the exported telemetry, the exports) is
 * searched for them. The same search finds what must be there (the event
 * ids sent, the truncated addresses), so it is a search that can fail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StartedProcess, startTask } from "./helpers/process.ts";
import { freePort } from "./helpers/ports.ts";
import { analyticsManifest, CHROME, SECRET_KEY } from "./helpers/marketing.ts";
import { reportKeyOf } from "./helpers/stats.ts";
import { runAdmin } from "./helpers/admin.ts";
import { type Receiver, startReceiver } from "./helpers/webhook_receiver.ts";

const SITE_KEY = "pk_0123456789abcdef0123456789abcdef";
/** A second site key of the site, sent only in the `key` query parameter. */
const QUERY_SITE_KEY = "pk_12121212121212121212121212121212";
const REPORT_KEY = reportKeyOf("demo");
const UNKNOWN_SITE_KEY = "pk_abababababababababababababababab";
const WRONG_SECRET_KEY = "sk_cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd";
/** A webhook's signing secret, given only in the manifest. */
const WEBHOOK_SECRET = "whsec_c2VjcmV0LXRoYXQtbXVzdC1uZXZlci1sZWFrLTQy";
/** Keys sent in headers and the webhook's secret (and its key part): never written anywhere. */
const SECRETS = [
  SITE_KEY,
  SECRET_KEY,
  REPORT_KEY,
  UNKNOWN_SITE_KEY,
  WRONG_SECRET_KEY,
  WEBHOOK_SECRET,
  WEBHOOK_SECRET.slice("whsec_".length),
];
/** Client addresses, sent through X-Forwarded-For (TRUST_PROXY=1), and what may be kept of each. */
const ADDRESSES = [
  { full: "203.0.113.77", kept: "203.0.113.0" },
  { full: "198.51.100.23", kept: "198.51.100.0" },
  { full: "2001:db8:85a3:8d3:1319:8a2e:370:7348", kept: "2001:db8:85a3::" },
];

describe("what the system writes", { timeout: 120_000 }, () => {
  const telemetry: string[] = [];
  const collector = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    // OTLP/HTTP protobuf: strings travel as plain UTF-8 inside, so a byte search finds them.
    telemetry.push(new TextDecoder().decode(await req.arrayBuffer()));
    return new Response(null, { status: 200 });
  });
  const dataDir = Deno.makeTempDirSync({ prefix: "crm-secrets-" });
  const ports = {
    AUTH_URL: `http://127.0.0.1:${freePort()}`,
    CONTENT_URL: `http://127.0.0.1:${freePort()}`,
    INGEST_URL: `http://127.0.0.1:${freePort()}`,
  };
  const env = {
    ...ports,
    CRM_DATA_DIR: dataDir,
    DATABASE_URL: "",
    REDIS_URL: "",
    LOG_LEVEL: "debug",
    TRUST_PROXY: "1",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.addr.port}`,
    OTEL_SERVICE_NAME: "crm-secrets-test",
    OTEL_BSP_SCHEDULE_DELAY: "200",
    OTEL_METRIC_EXPORT_INTERVAL: "500",
    // The webhook's receiver is on the loopback, over http.
    WEBHOOK_ALLOW_PRIVATE: "1",
    WEBHOOK_ALLOW_INSECURE: "1",
  };
  const receiver: Receiver = startReceiver(WEBHOOK_SECRET);
  let running: StartedProcess | undefined;
  let written = "";
  /** What the process printed and the admin command line exported: no telemetry. */
  let printed = "";
  const eventIds: string[] = [];

  beforeAll(async () => {
    const manifest = await analyticsManifest();
    manifest.reportKeys = [REPORT_KEY];
    manifest.siteKeys = [SITE_KEY, QUERY_SITE_KEY];
    manifest.webhooks = [{
      url: `${receiver.url}/hook`,
      events: ["content.published", "lead.created"],
      secret: WEBHOOK_SECRET,
    }];
    const seed = `${dataDir}/seed.json`;
    await Deno.writeTextFile(seed, JSON.stringify(manifest));
    running = await startTask(["--seed", seed], env, { direct: true });
    const base = running.url;
    const send = async (path: string, init: RequestInit & { ip: string }) => {
      const headers = new Headers(init.headers);
      headers.set("x-forwarded-for", init.ip);
      const answer = await fetch(base + path, { ...init, headers });
      await answer.body?.cancel();
      return answer.status;
    };
    for (const [i, { full: ip }] of ADDRESSES.entries()) {
      // Content: the key as a header and as the key parameter, a valid one and an unknown one.
      expect(await send("/content/v1/pages/home", { ip, headers: { "x-crm-key": SITE_KEY } }))
        .toBe(200);
      expect(await send(`/content/v1/pages/home?key=${QUERY_SITE_KEY}&lang=en`, { ip })).toBe(200);
      expect(await send("/content/v1/langs", { ip, headers: { "x-crm-key": UNKNOWN_SITE_KEY } }))
        .toBe(401);
      expect(await send("/content/v1/nope", { ip, headers: { "x-crm-key": UNKNOWN_SITE_KEY } }))
        .toBe(404);
      // Events with the secret key, a wrong one, and a browser page view and lead.
      const eventId = `secret-test-${i}`;
      eventIds.push(eventId);
      const json = { "content-type": "application/json" };
      expect(
        await send("/marketing/event", {
          ip,
          method: "POST",
          headers: { ...json, "x-event-key": SECRET_KEY },
          body: JSON.stringify({
            name: "signup",
            event_id: eventId,
            url: `https://demo.example/x?key=${SITE_KEY}&token=${SECRET_KEY}`,
          }),
        }),
      ).toBe(200);
      expect(
        await send("/marketing/event", {
          ip,
          method: "POST",
          headers: { ...json, "x-event-key": WRONG_SECRET_KEY },
          body: JSON.stringify({ name: "signup" }),
        }),
      ).toBe(401);
      const page = {
        "content-type": "text/plain;charset=UTF-8",
        origin: "https://demo.example",
        "user-agent": CHROME,
      };
      expect(
        await send("/marketing/view", {
          ip,
          method: "POST",
          headers: page,
          body: JSON.stringify({ v: eventId, s: eventId, u: "https://demo.example/" }),
        }),
      ).toBeLessThan(300);
      expect(
        await send("/marketing/lead", {
          ip,
          method: "POST",
          headers: page,
          body: JSON.stringify({ email: `${eventId}@example.com`, v: eventId, s: eventId }),
        }),
      ).toBeLessThan(300);
      // Reports with the report key, and with a secret key where a report key belongs.
      for (const key of [REPORT_KEY, SECRET_KEY]) {
        await send("/stats/v1/query", {
          ip,
          method: "POST",
          headers: { ...json, "x-report-key": key },
          body: JSON.stringify({ metrics: ["pageviews"], date_range: "today" }),
        });
      }
    }
    // The seed's content.published and a lead.created per lead reached the receiver.
    await receiver.waitFor((d) => d.type === "lead.created", ADDRESSES.length, 60_000);
    // What the operator exports.
    const exports: string[] = [];
    for (
      const args of [
        ["events", "export", "demo"],
        ["pageviews", "export", "demo"],
        ["leads", "export", "demo"],
        ["export-site", "demo"],
        ["webhooks", "log", "demo"],
      ]
    ) {
      const run = await runAdmin(args, { ...ports, LOG_LEVEL: "debug" });
      expect(run.code, run.stderr).toBe(0);
      exports.push(run.stdout, run.stderr);
    }
    // Telemetry of all the above has been sent once the traces name the routes.
    for (let waited = 0; !telemetry.join("").includes("/marketing/event"); waited += 250) {
      if (waited > 20_000) throw new Error("no trace of /marketing/event reached the collector");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(await running.stop()).toBe(0);
    const { stdout, stderr } = running.output();
    running = undefined;
    printed = [stdout, stderr, ...exports].join("\n");
    written = [printed, ...telemetry].join("\n");
  }, 120_000);

  afterAll(async () => {
    try {
      running?.process.kill("SIGKILL");
    } catch { /* stopped */ }
    await collector.shutdown();
    await receiver.close();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  });

  it("holds what was sent, so the search below can find things", () => {
    for (const id of eventIds) expect(written).toContain(id);
    // The webhook was used: its deliveries are in the log printed, signed with the secret.
    expect(receiver.deliveries.length).toBeGreaterThan(ADDRESSES.length);
    for (const d of receiver.deliveries) {
      expect(d.verified).toBe(true);
      expect(printed).toContain(d.id);
    }
    // Debug access logs were written, and telemetry was exported.
    expect(written).toContain('"msg":"request"');
    expect(telemetry.length).toBeGreaterThan(0);
  });

  it("holds no key, valid or not, anywhere", () => {
    for (const secret of SECRETS) {
      const at = written.indexOf(secret);
      expect(at, `${secret} found: …${written.slice(Math.max(0, at - 200), at + 80)}…`).toBe(-1);
    }
  });

  it("holds a key sent in the key parameter in no log and no export", () => {
    expect(printed).not.toContain(QUERY_SITE_KEY);
    expect(printed).toContain("key=***");
  });

  it("holds it in the exported server span, a known gap of Deno's own instrumentation", () => {
    // Deno's span for each Deno.serve request records url.full, query included,
    // before the gateway runs, and attributes set later are added beside it,
    // not in its place. docs/observability.md says so and tells clients to
    // send the header. When this fails, Deno stopped recording the query: drop
    // the note and move QUERY_SITE_KEY into SECRETS.
    expect(telemetry.join("")).toContain(`key=${QUERY_SITE_KEY}`);
  });

  it("holds no full client address anywhere, only the truncated ones", () => {
    for (const { full, kept } of ADDRESSES) {
      const at = written.indexOf(full);
      expect(at, `${full} found: …${written.slice(Math.max(0, at - 200), at + 80)}…`).toBe(-1);
      expect(written).toContain(kept);
    }
  });
});
