/**
 * Share links: `sh_` + 32 lowercase hex, naming a read-only view of one
 * site's reports. The id itself is in the link (and in `admin share list`),
 * so it is stored as it is; a link's optional password is stored only as a
 * scrypt hash (node:crypto's, built into the runtime), because people choose
 * passwords and a fast hash would let a leaked table be guessed through.
 */
import { Buffer } from "node:buffer";
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";

export const SHARE_ID = /^sh_[a-f0-9]{32}$/;

/** The longest password and label a link may have. */
export const SHARE_PASSWORD_MAX = 200;
export const SHARE_LABEL_MAX = 200;

/**
 * scrypt's cost: N = 2^14, r = 8, p = 1 (16 MiB and tens of ms a check on
 * one core), the interactive-login setting of scrypt's paper. The stored
 * form names its parameters, so raising them later leaves old hashes valid.
 */
export const SCRYPT_COST: ScryptCost = { N: 16_384, r: 8, p: 1 };

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export function generateShareId(): string {
  return "sh_" + randomBytes(16).toString("hex");
}

/** The page of a link: PUBLIC_URL (without its trailing slash) + /share/ID. */
export function shareUrl(publicUrl: string, id: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/share/${id}`;
}

function derive(
  password: string,
  salt: Buffer,
  cost: ScryptCost,
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(
      password,
      salt,
      KEY_BYTES,
      { ...cost, maxmem: 256 * cost.N * cost.r },
      (error, key) => error ? reject(error) : resolve(key),
    )
  );
}

/** The stored form: `scrypt$N$r$p$salt$hash`, salt and hash in base64. */
export async function hashPassword(
  password: string,
  cost: ScryptCost = SCRYPT_COST,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, cost);
  return ["scrypt", cost.N, cost.r, cost.p, salt.toString("base64"), key.toString("base64")]
    .join("$");
}

const STORED = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/;

/**
 * Whether password is the one stored, compared in constant time. A stored
 * form that cannot be read matches nothing.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = STORED.exec(stored);
  if (!parts) return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const expected = Buffer.from(parts[5], "base64");
  if (expected.length !== KEY_BYTES) return false;
  const key = await derive(password, Buffer.from(parts[4], "base64"), { N, r, p });
  return timingSafeEqual(key, expected);
}
