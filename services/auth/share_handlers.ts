/**
 * Share links in auth-service: resolving one for the gateway (its site, and
 * its password checked) and the operator's create, list and revoke. A link
 * is cached as keys are (resolver.ts): revoking it publishes key-changed
 * with its id, and no answer outlives its expiry.
 */
import { createHash } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type {
  AuthAdminService,
  AuthService,
  ShareLinkSchema,
} from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { Code, publicError, siteNotFound } from "../lib/errors.ts";
import type { Bus } from "../lib/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { Cache } from "../lib/cache.ts";
import {
  generateShareId,
  hashPassword,
  SHARE_ID,
  SHARE_LABEL_MAX,
  SHARE_PASSWORD_MAX,
  shareUrl,
  verifyPassword,
} from "../lib/share_links.ts";
import type { Resolver } from "./resolver.ts";
import type { ShareLinkRecord, ShareStore } from "./share_store.ts";
import type { AuthStore } from "./storage.ts";
import { forgetKey } from "./admin_handlers.ts";

const invalidKey = () => publicError(Code.Unauthenticated, "invalid_key");
const passwordRequired = () => publicError(Code.Unauthenticated, "password_required");

/** Passwords found right lately, so a link's every read does not pay for scrypt. */
const MAX_CHECKED = 10_000;

type ShareHandlers = Pick<
  ServiceImpl<typeof AuthService>,
  "resolveShareLink" | "describeShareLink"
>;

export function shareHandlers(resolver: Resolver, clock: Clock): ShareHandlers {
  // Keyed by a digest of the link, the stored hash and the password: a new
  // password (or none) of the same link never meets an old entry.
  const checked = new Cache<true>({
    name: "auth.share_passwords",
    maxEntries: MAX_CHECKED,
    clock,
    ttlMs: 0,
  });
  return {
    async resolveShareLink({ id, password }) {
      if (!SHARE_ID.test(id)) throw invalidKey();
      const { siteId, until, share } = await resolver.shareLink(id);
      if (!siteId || !share) throw invalidKey();
      if (share.passwordHash !== null) {
        if (password === "" || password.length > SHARE_PASSWORD_MAX) throw passwordRequired();
        const digest = createHash("sha256").update(`${id}\0${share.passwordHash}\0${password}`)
          .digest("hex");
        const right = await checked.get(digest, async () => {
          const ok = await verifyPassword(password, share.passwordHash!);
          return ok ? { value: true, until } : { value: undefined, until: clock.now() };
        });
        if (!right) throw passwordRequired();
      }
      return { siteId, cacheUntilMs: BigInt(until) };
    },

    async describeShareLink({ id }) {
      if (!SHARE_ID.test(id)) throw invalidKey();
      const { siteId, until, share } = await resolver.shareLink(id);
      if (!siteId || !share) throw invalidKey();
      return {
        siteId,
        passwordRequired: share.passwordHash !== null,
        embedOrigins: share.embedOrigins,
        cacheUntilMs: BigInt(until),
      };
    },
  };
}

type ShareLinkMessage = MessageInitShape<typeof ShareLinkSchema>;

function message(link: ShareLinkRecord, publicUrl: string): ShareLinkMessage {
  return {
    id: link.id,
    siteId: link.siteId,
    url: shareUrl(publicUrl, link.id),
    expiresAtMs: BigInt(link.expiresAt ?? 0),
    label: link.label ?? "",
    hasPassword: link.passwordHash !== null,
    createdAtMs: BigInt(link.createdAt),
    revokedAtMs: BigInt(link.revokedAt ?? 0),
  };
}

type ShareAdminHandlers = Pick<
  ServiceImpl<typeof AuthAdminService>,
  "createShareLink" | "listShareLinks" | "revokeShareLink"
>;

export interface ShareAdminOptions {
  store: ShareStore;
  sites: AuthStore;
  resolver: Resolver;
  bus: Bus;
  clock: Clock;
  /** The gateway's public base URL, read at each call (PUBLIC_URL, or the gateway's address). */
  publicUrl(): string;
}

export function shareAdminHandlers(options: ShareAdminOptions): ShareAdminHandlers {
  const { store, resolver, bus, clock } = options;
  return {
    async createShareLink({ siteId, expiresAtMs, password, label }) {
      const now = clock.now();
      const expiresAt = expiresAtMs === 0n ? null : Number(expiresAtMs);
      if (expiresAt !== null && expiresAt <= now) {
        throw publicError(Code.InvalidArgument, "expiry_in_past");
      }
      if (password.length > SHARE_PASSWORD_MAX) {
        throw publicError(Code.InvalidArgument, "password_too_long");
      }
      if (label.length > SHARE_LABEL_MAX) {
        throw publicError(Code.InvalidArgument, "label_too_long");
      }
      const link: ShareLinkRecord = {
        id: generateShareId(),
        siteId,
        label: label === "" ? null : label,
        passwordHash: password === "" ? null : await hashPassword(password),
        expiresAt,
        createdAt: now,
        revokedAt: null,
      };
      if (await store.create(link) === "no_site") {
        throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
      }
      return { link: message(link, options.publicUrl()) };
    },

    async listShareLinks({ siteId }) {
      const links = await store.links(siteId);
      if (!links.length && !(await options.sites.site(siteId))) {
        throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
      }
      const base = options.publicUrl();
      return { links: links.map((link) => message(link, base)) };
    },

    async revokeShareLink({ id }) {
      if (!SHARE_ID.test(id)) throw publicError(Code.InvalidArgument, "invalid_share_link");
      const now = clock.now();
      const before = await store.revoke(id, now);
      if (!before) throw publicError(Code.NotFound, "share_link_not_found");
      await forgetKey(resolver, bus, id);
      const alreadyRevoked = before.revokedAt !== null;
      return {
        link: message({ ...before, revokedAt: before.revokedAt ?? now }, options.publicUrl()),
        alreadyRevoked,
      };
    },
  };
}
