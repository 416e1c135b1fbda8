/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the
 * `webhook-signature` header is `v1,` and the base64 of an HMAC-SHA256, keyed
 * with the bytes the secret's base64 part encodes, over
 * `{webhook-id}.{webhook-timestamp}.{body}`. Web Crypto does the HMAC.
 */
import { Buffer } from "node:buffer";

const PREFIX = "whsec_";
/** How many random bytes a secret may carry (CONTRACT, "Site manifest"). */
export const SECRET_BYTES = { min: 24, max: 64 } as const;

/** Standard base64 with its padding, nothing else (Buffer alone would skip stray characters). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The key bytes of a `whsec_` secret, or undefined when it is not `whsec_`
 * followed by padded standard base64 of 24 to 64 bytes.
 */
export function secretKeyBytes(secret: string): Uint8Array<ArrayBuffer> | undefined {
  if (!secret.startsWith(PREFIX)) return undefined;
  const text = secret.slice(PREFIX.length);
  if (!BASE64.test(text)) return undefined;
  const bytes = new Uint8Array(Buffer.from(text, "base64"));
  if (bytes.length < SECRET_BYTES.min || bytes.length > SECRET_BYTES.max) {
    return undefined;
  }
  return bytes;
}

export interface SignedContent {
  /** The message id, `webhook-id`. */
  id: string;
  /** Unix seconds of this attempt, `webhook-timestamp`. */
  timestamp: number;
  /** The exact bytes sent as the body, as text. */
  body: string;
}

const encoder = new TextEncoder();

/** The `webhook-signature` header value for the content under the secret. */
export async function signWebhook(secret: string, content: SignedContent): Promise<string> {
  const keyBytes = secretKeyBytes(secret);
  if (!keyBytes) throw new Error("a webhook secret must be whsec_ and base64 of 24 to 64 bytes");
  const key = await crypto.subtle.importKey(
    "raw",
    keyBytes,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const signed = encoder.encode(`${content.id}.${content.timestamp}.${content.body}`);
  const mac = await crypto.subtle.sign("HMAC", key, signed);
  return `v1,${Buffer.from(mac).toString("base64")}`;
}
