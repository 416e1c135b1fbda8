/**
 * A lead: a contact request from a site's form (browser route, site by
 * Origin) or sent by a server with a secret key. Fields (README "Leads"):
 *
 * | field               | alias      | rule                                                 |
 * | lead_id             | id         | optional idempotency key, 1 to 128 characters        |
 * | form                |            | optional form name, up to 64 characters              |
 * | name                |            | up to 200 characters                                 |
 * | email               |            | up to 254 characters, one "@"                         |
 * | phone               |            | up to 50 characters                                  |
 * | message             |            | up to 4000 characters                                |
 * | fields              |            | flat object, up to 30 keys (64 characters), values   |
 * |                     |            | string (500), number or boolean                      |
 * | visitor_id          | vid, v     | the browser's crm_vid, optional                      |
 * | session_id          | sid, s     | the browser's crm_sid, optional (attribution)        |
 * | url                 | u          | page of the form, cleaned like every stored URL      |
 *
 * At least one of name, email, phone or message is required.
 */
import {
  type Body,
  invalidBody,
  isObject,
  optionalBrowserId,
  optionalId,
  optionalUrl,
  RefusedError,
} from "./body_fields.ts";
import { cleanText, truncate } from "./text.ts";
import { normalizeString, type ParamValue } from "./params.ts";

export interface LeadInput {
  leadId: string | null;
  form: string | null;
  name: string | null;
  email: string | null;
  phone: string | null;
  message: string | null;
  fields: Record<string, ParamValue>;
  visitorId: string | null;
  sessionId: string | null;
  url: string | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const MAX_FIELDS = 30;
const FIELD_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

function text(body: Body, name: string, max: number): string | null {
  const value = body[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalidBody(name, "must be a string");
  const cleaned = cleanText(value)!.trim();
  if (cleaned.length > max) throw invalidBody(name, `must have at most ${max} characters`);
  return cleaned === "" ? null : cleaned;
}

function extraFields(body: Body): Record<string, ParamValue> {
  const value = body.fields;
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw invalidBody("fields", "must be an object");
  const entries = Object.entries(value);
  if (entries.length > MAX_FIELDS) {
    throw invalidBody("fields", `must have at most ${MAX_FIELDS} keys`);
  }
  const out: Record<string, ParamValue> = {};
  for (const [key, raw] of entries) {
    if (!FIELD_KEY.test(key)) throw invalidBody("fields", `key "${truncate(key, 64)}" is invalid`);
    if (typeof raw === "number" || typeof raw === "boolean") {
      if (typeof raw === "number" && !Number.isFinite(raw)) continue;
      out[key] = raw;
    } else if (typeof raw === "string") {
      out[key] = normalizeString(raw)!;
    } else if (raw !== null && raw !== undefined) {
      throw invalidBody("fields", `value of "${key}" must be a string, number or boolean`);
    }
  }
  return out;
}

export function parseLeadBody(body: unknown): LeadInput {
  if (!isObject(body)) throw new RefusedError({ reason: "invalid_body" });
  const email = text(body, "email", 254);
  if (email !== null && !EMAIL.test(email)) throw invalidBody("email", "is not an email address");
  const lead: LeadInput = {
    leadId: optionalId(body, ["lead_id", "id"]),
    form: text(body, "form", 64),
    name: text(body, "name", 200),
    email,
    phone: text(body, "phone", 50),
    message: text(body, "message", 4000),
    fields: extraFields(body),
    visitorId: optionalBrowserId(body, ["visitor_id", "vid", "v"]),
    sessionId: optionalBrowserId(body, ["session_id", "sid", "s"]),
    url: optionalUrl(body, ["url", "u"]),
  };
  if (!lead.name && !lead.email && !lead.phone && !lead.message) {
    throw invalidBody("email", "a lead needs a name, email, phone or message");
  }
  return lead;
}
