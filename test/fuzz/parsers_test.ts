/**
 * Property-based tests (fast-check) of the pure parsers and validators that
 * take outside input: on anything at all they either answer or refuse with
 * their own typed error, never another exception, and what they accept
 * keeps the rules.
 */
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { parseQuery, QueryError } from "../../services/ingest/stats/query.ts";
import { ManifestError, validateManifest } from "../../services/lib/manifest/validate.ts";
import { EVENT_KEYS, eventOf, pageViewOf } from "../../services/gateway/ingest_body.ts";
import { METRICS, QUERY_FIELDS } from "../../services/lib/stats/vocabulary.ts";
import { MANIFEST_ORDER } from "../../services/cli/site_manifest.ts";
import { parseEventBody } from "../../services/ingest/event_body.ts";
import { RefusedError } from "../../services/ingest/body_fields.ts";
import { clientIp, normalizeIp, truncateIp } from "../../services/lib/ip.ts";
import { hostOfOrigin } from "../../services/lib/origin.ts";
import { EVENT_NAME } from "../../services/lib/formats.ts";
import type { JsonObject } from "../../services/lib/json.ts";

const RUNS = { numRuns: 2_000 };

/** Objects shaped like the real input (right field names, any values), and plain noise. */
function objectsWith(keys: string[]) {
  return fc.oneof(
    fc.dictionary(fc.constantFrom(...keys), fc.jsonValue(), { maxKeys: keys.length }),
    fc.dictionary(fc.string(), fc.jsonValue()),
  ) as fc.Arbitrary<JsonObject>;
}

/** Runs fn; passes when it answers or throws one of the allowed error types. */
function onlyRefuses(fn: () => unknown, ...allowed: (new (...args: never[]) => Error)[]) {
  try {
    fn();
  } catch (error) {
    if (!allowed.some((type) => error instanceof type)) throw error;
  }
}

describe("parsers under fuzzing", () => {
  it("the reports query accepts or refuses with invalid_query, and what it accepts keeps the rules", () => {
    fc.assert(
      fc.property(objectsWith([...QUERY_FIELDS]), (body) => {
        let query;
        try {
          query = parseQuery(body as never);
        } catch (error) {
          expect(error).toBeInstanceOf(QueryError);
          return;
        }
        expect(query.metrics.length).toBeGreaterThan(0);
        expect(new Set(query.metrics).size).toBe(query.metrics.length);
        for (const metric of query.metrics) expect(METRICS).toContain(metric);
      }),
      RUNS,
    );
  });

  it("a well-formed reports query is accepted", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.constantFrom(...METRICS.filter((m) => m !== "conversion_rate")), {
          minLength: 1,
        }),
        fc.constantFrom("today", "yesterday", "7d", "30d", "month", "year", "all"),
        fc.integer({ min: 1, max: 10_000 }),
        (metrics, range, limit) => {
          const query = parseQuery({ metrics, date_range: range, limit } as never);
          expect(query.metrics).toEqual(metrics);
        },
      ),
      RUNS,
    );
  });

  it("the site manifest validates or refuses with a ManifestError", () => {
    fc.assert(
      fc.property(
        objectsWith(MANIFEST_ORDER),
        (manifest) => onlyRefuses(() => validateManifest(manifest), ManifestError),
      ),
      RUNS,
    );
  });

  it("event bodies map without throwing and parse or refuse with a typed reason", () => {
    fc.assert(
      fc.property(objectsWith(Object.values(EVENT_KEYS).flat()), (body) => {
        const event = eventOf(body);
        let input;
        try {
          input = parseEventBody(event);
        } catch (error) {
          expect(error).toBeInstanceOf(RefusedError);
          return;
        }
        expect(input.name).toMatch(EVENT_NAME);
      }),
      RUNS,
    );
  });

  it("page view bodies map without throwing", () => {
    const keys = ["u", "v", "s", "t", "r", "sw", "sh", "vw", "vh", "pr", "l", "tz", "c", "a"];
    fc.assert(
      fc.property(objectsWith(keys), fc.boolean(), (body, gpc) => {
        pageViewOf(body, { gpc });
      }),
      RUNS,
    );
  });

  it("addresses: any text is normalised or kept, never thrown on", () => {
    const address = fc.oneof(fc.ipV4(), fc.ipV6(), fc.string());
    fc.assert(
      fc.property(
        address,
        fc.option(fc.string()),
        fc.integer({ min: 0, max: 32 }),
        (ip, forwarded, trust) => {
          normalizeIp(ip);
          clientIp(ip, forwarded, trust);
          truncateIp(ip);
        },
      ),
      RUNS,
    );
  });

  it("a truncated IPv4 address keeps its network and drops the host", () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const network = ip.split(".").slice(0, 3).map(Number).join(".");
        expect(truncateIp(ip)).toBe(`${network}.0`);
      }),
      RUNS,
    );
  });

  it("origins give a host or nothing", () => {
    fc.assert(
      fc.property(fc.oneof(fc.webUrl(), fc.string()), (origin) => {
        const host = hostOfOrigin(origin);
        if (host !== undefined) expect(host).not.toMatch(/[/?#@\s]/);
      }),
      RUNS,
    );
  });
});
