/**
 * Request bodies the document and the product agree on (the document's
 * schemas checked with Ajv, as every answer is): a `null` member of a query
 * or funnel counts as absent, and an event's parameters may be any JSON
 * value (a string parameter keeps an object as its JSON text).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "./helpers/system.ts";
import { openApiValidator } from "./helpers/openapi.ts";
import { analyticsManifest, postEvent } from "./helpers/marketing.ts";
import { REPORT_KEY, statsQuery } from "./helpers/stats.ts";
import { exportRows } from "./helpers/exports.ts";
import { SYSTEM_STORAGES } from "./helpers/env.ts";

describe.each(SYSTEM_STORAGES)("on %s", (storage) => {
  const document = openApiValidator();

  async function funnel(sys: TestSystem, body: unknown) {
    const response = await fetch(`${sys.url}/stats/v1/funnel`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-report-key": REPORT_KEY },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  describe("request bodies, by the document and by the product", () => {
    let sys: TestSystem;

    beforeAll(async () => {
      sys = await startTestSystem({
        storage,
        seed: { ...await analyticsManifest(), reportKeys: [REPORT_KEY] },
      });
      const stored = await postEvent(sys, { name: "note", id: "n1", params: { text: "hi", n: 2 } });
      expect(stored.status).toBe(200);
    });
    afterAll(async () => {
      await sys?.close();
    });

    it("take a null member of a query as absent", async () => {
      const plain = { metrics: ["events"], date_range: "all" };
      const withNulls = {
        ...plain,
        dimensions: null,
        filters: null,
        order_by: null,
        include: { totals: null, bots: null, time_labels: null, compare: null },
        limit: null,
        offset: null,
        time_zone: null,
      };
      expect(document.checkSchema("Query", withNulls)).toEqual([]);
      expect(document.checkSchema("Query", { ...plain, include: null })).toEqual([]);
      const expected = await statsQuery(sys, plain);
      expect(expected.status).toBe(200);
      for (const body of [withNulls, { ...plain, include: null }]) {
        const answer = await statsQuery(sys, body);
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual(expected.body);
      }
    });

    it("refuse a null required member, both", async () => {
      for (
        const body of [{ metrics: null, date_range: "all" }, {
          metrics: ["events"],
          date_range: null,
        }]
      ) {
        expect(document.checkSchema("Query", body).join()).toMatch(/Query/);
        const answer = await statsQuery(sys, body);
        expect(answer.status).toBe(400);
        expect(answer.body.message).toBe("invalid_query");
      }
    });

    it("take a null member of a funnel as absent", async () => {
      const plain = { date_range: "all", steps: [{ page: "/" }, { event: "note" }] };
      const withNulls = { ...plain, filters: null, include: { bots: null } };
      expect(document.checkSchema("Funnel", withNulls)).toEqual([]);
      expect(document.checkSchema("Funnel", { ...plain, include: null })).toEqual([]);
      const expected = await funnel(sys, plain);
      expect(expected.status).toBe(200);
      for (const body of [withNulls, { ...plain, include: null }]) {
        expect(await funnel(sys, body)).toEqual(expected);
      }
      const refused = { ...plain, steps: null };
      expect(document.checkSchema("Funnel", refused).join()).toMatch(/Funnel/);
      expect((await funnel(sys, refused)).status).toBe(400);
    });

    it("take parameters of any JSON value, an object kept as its JSON text", async () => {
      const params = { text: { plan: "pro", seats: [1, 2] }, n: 3, ok: "true" };
      for (const schema of ["ServerEvent", "BrowserEvent"]) {
        const body = schema === "ServerEvent" ? { name: "note", params } : { n: "note", p: params };
        expect(document.checkSchema(schema, body), schema).toEqual([]);
      }
      const sent = await postEvent(sys, { name: "note", id: "n2", params });
      expect(sent.status).toBe(200);
      const stored = (await exportRows(sys, "events", "demo")).find((r) => r.eventId === "n2");
      expect(stored?.params).toEqual({ text: '{"plan":"pro","seats":[1,2]}', n: 3, ok: true });
    });

    it("still refuse parameters that are not an object", async () => {
      expect(document.checkSchema("ServerEvent", { name: "note", params: ["a"] }).join()).toMatch(
        /ServerEvent/,
      );
      const refused = await postEvent(sys, { name: "note", params: ["a"] });
      expect(refused.status).toBe(400);
      expect((await refused.json()).message).toBe("invalid_body");
    });
  });
});
