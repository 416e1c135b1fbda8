/**
 * Test support: request bodies as the gateway hands them to ingest-service,
 * so the body tests check the public JSON's answers through the one mapping
 * the gateway applies (ingest_body.ts) and the rules applied here. A body that
 * is not a JSON object the gateway answers invalid_body itself.
 */
import { eventOf, leadOf, pageViewOf } from "../gateway/ingest_body.ts";
import { isJsonObject, type JsonObject } from "../lib/json.ts";
import { RefusedError } from "./body_fields.ts";

function mapped<T>(map: (body: JsonObject) => T): (body: unknown) => T {
  return (body) => {
    if (!isJsonObject(body)) throw new RefusedError({ reason: "invalid_body" });
    return map(body);
  };
}

export const pageViewFromJson = mapped((body) => pageViewOf(body, { gpc: false }));
export const eventFromJson = mapped(eventOf);
export const leadFromJson = mapped(leadOf);
