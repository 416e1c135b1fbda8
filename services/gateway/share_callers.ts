/**
 * The gateway's cache of auth-service's answers about share links, beside
 * Callers: a link and password found right are kept until the deadline
 * auth-service gave (never past KEY_CACHE_TTL_S from its read, nor past the
 * link's expiry), an unknown link for a short while, and a wrong or missing
 * password never (each attempt must reach the count of wrong passwords).
 * A revocation (key-changed with the link's id) drops every entry of it.
 */
import { createHash } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import type { Bus } from "../lib/bus.ts";
import { Cache, type Loaded } from "../lib/cache.ts";
import type { Clock } from "../lib/clock.ts";
import { reasonOf } from "../lib/errors.ts";
import { SHARE_ID } from "../lib/share_links.ts";

export type ShareCaller =
  | { ok: true; siteId: string }
  | { ok: false; reason: "invalid_key" | "password_required" };

interface PageInfo {
  siteId: string;
  passwordRequired: boolean;
  /** The site's embedOrigins: who may frame the embedded page. */
  embedOrigins: string[];
}

/** What the shared page needs to know of its link. */
export type SharePage = ({ ok: true } & PageInfo) | { ok: false };

const REFUSAL_TTL_MS = 5_000;
const MAX_ENTRIES = 20_000;

/** A password refused by auth-service: an answer of its own, never cached. */
class PasswordRequired extends Error {}

export interface ShareCallersOptions {
  bus: Bus;
  clock: Clock;
  keyCacheTtlS: number;
}

export class ShareCallers {
  #sites: Cache<string>;
  #pages: Cache<PageInfo>;

  constructor(private readonly auth: Client<typeof AuthService>, options: ShareCallersOptions) {
    const common = {
      maxEntries: MAX_ENTRIES,
      clock: options.clock,
      ttlMs: 0,
      missTtlMs: Math.min(REFUSAL_TTL_MS, options.keyCacheTtlS * 1000),
    };
    this.#sites = new Cache<string>({ name: "gateway.share_links", ...common });
    this.#pages = new Cache<PageInfo>({ name: "gateway.share_pages", ...common });
    const ofLink = (id: string) => (key: string) => key.startsWith(`${id}:`);
    this.#sites.invalidateOn(options.bus, "key-changed", ofLink);
    this.#pages.invalidateOn(options.bus, "key-changed", ofLink);
  }

  close(): void {
    this.#sites.close();
    this.#pages.close();
  }

  /** The site a link (x-share-link) with its password (x-share-password, "" when none) reads. */
  async link(id: string, password: string): Promise<ShareCaller> {
    if (!SHARE_ID.test(id)) return { ok: false, reason: "invalid_key" };
    const digest = createHash("sha256").update(password).digest("hex");
    try {
      const siteId = await this.#sites.get(`${id}:${digest}`, async () => {
        try {
          const answer = await this.auth.resolveShareLink({ id, password });
          return { value: answer.siteId, until: Number(answer.cacheUntilMs) };
        } catch (error) {
          const reason = reasonOf(error)?.reason;
          if (reason === "password_required") throw new PasswordRequired();
          if (reason) return { value: undefined };
          throw error;
        }
      });
      return siteId === undefined ? { ok: false, reason: "invalid_key" } : { ok: true, siteId };
    } catch (error) {
      if (error instanceof PasswordRequired) return { ok: false, reason: "password_required" };
      throw error;
    }
  }

  /** Whether the link works, asks for a password, and which origins may frame it. */
  async page(id: string): Promise<SharePage> {
    if (!SHARE_ID.test(id)) return { ok: false };
    const page = await this.#pages.get(`${id}:page`, async (): Promise<Loaded<PageInfo>> => {
      try {
        const answer = await this.auth.describeShareLink({ id });
        return {
          value: {
            siteId: answer.siteId,
            passwordRequired: answer.passwordRequired,
            embedOrigins: [...answer.embedOrigins],
          },
          until: Number(answer.cacheUntilMs),
        };
      } catch (error) {
        if (reasonOf(error)) return { value: undefined };
        throw error;
      }
    });
    return page ? { ok: true, ...page } : { ok: false };
  }
}
