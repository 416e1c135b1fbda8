/**
 * A lead: a contact request from a site's form (browser route, site by
 * Origin) or sent by a server with a secret key. Fields (docs/analytics.md, "Leads"):
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
import type { Lead, ObjectField, TextField } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import {
  invalidBody,
  isAbsent,
  optionalBrowserId,
  optionalId,
  optionalText,
  optionalUrl,
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

function text(field: TextField | undefined, name: string, max: number): string | null {
  const value = optionalText(field);
  if (value === null) return null;
  const cleaned = cleanText(value)!.trim();
  if (cleaned.length > max) throw invalidBody(name, `must have at most ${max} characters`);
  return cleaned === "" ? null : cleaned;
}

function extraFields(field: ObjectField | undefined): Record<string, ParamValue> {
  if (isAbsent(field)) return {};
  if (field!.value.case !== "members") throw invalidBody("fields", "must be an object");
  const members = field!.value.value.members;
  if (members.length > MAX_FIELDS) {
    throw invalidBody("fields", `must have at most ${MAX_FIELDS} keys`);
  }
  const out: Record<string, ParamValue> = {};
  for (const { key, value } of members) {
    if (!FIELD_KEY.test(key)) throw invalidBody("fields", `key "${truncate(key, 64)}" is invalid`);
    const raw = value?.kind;
    if (raw?.case === "numberValue" || raw?.case === "boolValue") {
      if (raw.case === "numberValue" && !Number.isFinite(raw.value)) continue;
      out[key] = raw.value;
    } else if (raw?.case === "stringValue") {
      out[key] = normalizeString(raw.value)!;
    } else if (raw?.case === "jsonText") {
      throw invalidBody("fields", `value of "${key}" must be a string, number or boolean`);
    }
  }
  return out;
}

export function parseLeadBody(lead: Lead): LeadInput {
  const email = text(lead.email, "email", 254);
  if (email !== null && !EMAIL.test(email)) throw invalidBody("email", "is not an email address");
  const input: LeadInput = {
    leadId: optionalId(lead.leadId),
    form: text(lead.form, "form", 64),
    name: text(lead.name, "name", 200),
    email,
    phone: text(lead.phone, "phone", 50),
    message: text(lead.message, "message", 4000),
    fields: extraFields(lead.fields),
    visitorId: optionalBrowserId(lead.visitorId),
    sessionId: optionalBrowserId(lead.sessionId),
    url: optionalUrl(lead.url),
  };
  if (!input.name && !input.email && !input.phone && !input.message) {
    throw invalidBody("email", "a lead needs a name, email, phone or message");
  }
  return input;
}
