import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  EventRowSchema,
  LeadRowSchema,
  PageViewRowSchema,
  Source,
} from "./gen/crm/ingest/v1/ingest_pb.ts";
import { eventJson, leadJson, pageViewJson } from "./export_rows.ts";

const AT = Date.UTC(2026, 0, 10, 9, 0, 0, 123);
const UTM = ["utmSource", "utmMedium", "utmCampaign", "utmTerm", "utmContent"];

describe("export rows as printed", () => {
  it("an event: the export's fields in order, unknown values null", () => {
    const row = eventJson(create(EventRowSchema, {
      name: "signup",
      params: [
        { key: "plan", value: { kind: { case: "stringValue", value: "pro" } } },
        { key: "seats", value: { kind: { case: "numberValue", value: 3 } } },
      ],
      value: 4900n,
      source: Source.SERVER,
      attribution: { channel: "email", utmSource: "spring" },
      receivedAt: timestampFromMs(AT),
    }));
    // Every field of the export, the visit's and the time last (their order is checked
    // end to end by test/marketing_event_test.ts).
    expect(Object.keys(row)).toHaveLength(17);
    expect(Object.keys(row).slice(-8)).toEqual(["channel", ...UTM, "adLink", "receivedAt"]);
    expect(row).toMatchObject({
      eventId: null,
      params: { plan: "pro", seats: 3 },
      value: 4900,
      currency: null,
      source: "server",
      channel: "email",
      utmSource: "spring",
      utmMedium: null,
      receivedAt: "2026-01-10T09:00:00.123Z",
    });
  });

  it("a page view and a lead", () => {
    const view = pageViewJson(create(PageViewRowSchema, {
      url: "https://a.example/",
      clickIds: { gclid: "x" },
      bot: false,
      receivedAt: timestampFromMs(AT),
    }));
    expect(Object.keys(view).slice(0, 5)).toEqual([
      "visitorId",
      "sessionId",
      "url",
      "title",
      "referrer",
    ]);
    expect(view).toMatchObject({ clickIds: { gclid: "x" }, adCookies: {}, newVisitor: null });
    expect(view.bot).toBe(false);
    const lead = leadJson(create(LeadRowSchema, {
      id: "7",
      source: Source.BROWSER,
      fields: [{ key: "urgent", value: { kind: { case: "boolValue", value: true } } }],
      receivedAt: timestampFromMs(AT),
    }));
    expect(Object.keys(lead).slice(0, 3)).toEqual(["id", "leadId", "source"]);
    expect(lead).toMatchObject({ source: "browser", fields: { urgent: true }, email: null });
  });
});
