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
  cleanId,
  invalidBody,
  isAbsent,
  MAX_ID,
  MAX_URL,
  optionalText,
  plainValue,
} from "./body_fields.ts";
import { cleanText, truncate } from "./text.ts";
import { normalizeString, type ParamValue } from "./params.ts";
import { cleanUrl } from "./url_clean.ts";
import type { LeadRow } from "./rows.ts";

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

type TextMember = Exclude<keyof LeadInput, "fields">;

/**
 * A lead's members as sent, however they came (the lead route's typed body,
 * a line of `history import`): each text member as its string (null when
 * absent; a refusal when of another type), the members of `fields`, and the
 * key that names a member in a refusal.
 */
export interface SentLead {
  text(member: TextMember): string | null;
  /** The members of `fields`, each value as in JSON; null when absent; a refusal when no object. */
  fields(): [string, unknown][] | null;
  key(member: keyof LeadInput): string;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const MAX_FIELDS = 30;
const FIELD_KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/** The lead route's rules over a lead as sent: checked, cleaned, or refused naming the member. */
export function leadInputOf(sent: SentLead): LeadInput {
  const text = (member: TextMember, max: number): string | null => {
    const value = sent.text(member);
    if (value === null) return null;
    const cleaned = cleanText(value)!.trim();
    if (cleaned.length > max) {
      throw invalidBody(sent.key(member), `must have at most ${max} characters`);
    }
    return cleaned === "" ? null : cleaned;
  };
  const id = (member: TextMember, emptyIsNone = false): string | null => {
    const value = sent.text(member);
    if (value === null || (emptyIsNone && value === "")) return null;
    const cleaned = cleanId(value);
    if (cleaned === null) {
      throw invalidBody(sent.key(member), `must have 1 to ${MAX_ID} characters`);
    }
    return cleaned;
  };
  const url = (): string | null => {
    const value = sent.text("url");
    if (value === null || value === "") return null;
    const cleaned = cleanUrl(cleanText(value)!);
    return cleaned === null ? null : cleaned.slice(0, MAX_URL);
  };
  const email = text("email", 254);
  if (email !== null && !EMAIL.test(email)) {
    throw invalidBody(sent.key("email"), "is not an email address");
  }
  const input: LeadInput = {
    leadId: id("leadId"),
    form: text("form", 64),
    name: text("name", 200),
    email,
    phone: text("phone", 50),
    message: text("message", 4000),
    fields: extraFields(sent),
    visitorId: id("visitorId", true),
    sessionId: id("sessionId", true),
    url: url(),
  };
  if (!input.name && !input.email && !input.phone && !input.message) {
    throw invalidBody(sent.key("email"), "a lead needs a name, email, phone or message");
  }
  return input;
}

function extraFields(sent: SentLead): Record<string, ParamValue> {
  const members = sent.fields();
  if (members === null) return {};
  const key = sent.key("fields");
  if (members.length > MAX_FIELDS) throw invalidBody(key, `must have at most ${MAX_FIELDS} keys`);
  const out: Record<string, ParamValue> = {};
  for (const [name, value] of members) {
    if (!FIELD_KEY.test(name)) throw invalidBody(key, `key "${truncate(name, 64)}" is invalid`);
    if (typeof value === "number" || typeof value === "boolean") {
      if (typeof value === "number" && !Number.isFinite(value)) continue;
      out[name] = value;
    } else if (typeof value === "string") {
      out[name] = normalizeString(value)!;
    } else if (value !== null && value !== undefined) {
      throw invalidBody(key, `value of "${name}" must be a string, number or boolean`);
    }
  }
  return out;
}

/** The members of the lead route's typed body (the gateway mapped its JSON and aliases). */
function typedLead(lead: Lead): SentLead {
  const field = (member: keyof LeadInput): TextField | ObjectField | undefined => lead[member];
  return {
    text: (member) => optionalText(lead[member]),
    fields() {
      const fields = lead.fields;
      if (isAbsent(fields)) return null;
      if (fields!.value.case !== "members") throw invalidBody(fields!.key, "must be an object");
      // An object or an array arrives as its JSON text: refused as a value, never read.
      return fields!.value.value.members.map(({ key, value }) => [
        key,
        value?.kind.case === "jsonText" ? [] : plainValue(value),
      ]);
    },
    key: (member) => field(member)?.key || member,
  };
}

export function parseLeadBody(lead: Lead): LeadInput {
  return leadInputOf(typedLead(lead));
}

/** The row a lead is stored as: its members, and where, when and how it came. */
export function leadRow(
  lead: LeadInput,
  came: { id: string; siteId: string; receivedAt: string; source: "browser" | "server" },
): LeadRow {
  return {
    id: came.id,
    site_id: came.siteId,
    received_at: came.receivedAt,
    lead_id: lead.leadId,
    source: came.source,
    form: lead.form,
    name: lead.name,
    email: lead.email,
    phone: lead.phone,
    message: lead.message,
    fields: lead.fields,
    visitor_id: lead.visitorId,
    session_id: lead.sessionId,
    url: lead.url,
  };
}
