/**
 * `deno task admin share create|list|revoke`: share links, each showing one
 * site's reports read-only at PUBLIC_URL/share/ID. Passwords go to
 * auth-service once, at creation, and are never printed back.
 */
import { parseArgs } from "node:util";
import type { ShareLink } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import type { AdminClients } from "./admin_clients.ts";
import { UsageError } from "./analytics_commands.ts";
import { shareUrl } from "../lib/share_links.ts";

const ISO = /^\d{4}-\d{2}-\d{2}/;
const iso = (ms: bigint) => ms === 0n ? null : new Date(Number(ms)).toISOString();

/** What `share create` prints: the contract's four members. */
function created(link: ShareLink) {
  return {
    id: link.id,
    url: link.url,
    expiresAt: iso(link.expiresAtMs),
    label: link.label || null,
  };
}

/** A link as `share list` and `share revoke` print it (never its password). */
export function shareLinkJson(link: ShareLink) {
  return {
    ...created(link),
    siteId: link.siteId,
    hasPassword: link.hasPassword,
    createdAt: iso(link.createdAtMs),
    revokedAt: iso(link.revokedAtMs),
  };
}

/**
 * Runs `share create|list|revoke`. auth-service names each link's URL from
 * its own PUBLIC_URL; a PUBLIC_URL set for this command (publicUrl) names it
 * instead, so an operator's own setting is what the command prints.
 */
export async function shareCommand(
  clients: AdminClients,
  args: string[],
  publicUrl?: string,
): Promise<unknown> {
  const [action, ...rest] = args;
  const named = (link: ShareLink): ShareLink =>
    publicUrl ? { ...link, url: shareUrl(publicUrl, link.id) } : link;
  if (action === "create") {
    const { values, positionals } = parseArgs({
      args: rest,
      options: {
        expires: { type: "string" },
        password: { type: "string" },
        label: { type: "string" },
      },
      allowPositionals: true,
    });
    if (positionals.length !== 1) {
      throw new UsageError("expected SITE_ID [--expires ISO] [--password TEXT] [--label TEXT]");
    }
    let expiresAtMs = 0n;
    if (values.expires !== undefined) {
      const ms = Date.parse(values.expires);
      if (!ISO.test(values.expires) || Number.isNaN(ms)) {
        throw new UsageError(`--expires must be an ISO 8601 date or time, got "${values.expires}"`);
      }
      expiresAtMs = BigInt(ms);
    }
    if (values.password === "") throw new UsageError("--password must not be empty");
    const { link } = await clients.auth.createShareLink({
      siteId: positionals[0],
      expiresAtMs,
      password: values.password ?? "",
      label: values.label ?? "",
    });
    return created(named(link!));
  }
  if (action === "list") {
    if (rest.length !== 1) throw new UsageError("expected SITE_ID");
    const { links } = await clients.auth.listShareLinks({ siteId: rest[0] });
    return links.map((link) => shareLinkJson(named(link)));
  }
  if (action === "revoke") {
    if (rest.length !== 1) throw new UsageError("expected ID");
    const { link, alreadyRevoked } = await clients.auth.revokeShareLink({ id: rest[0] });
    return { ...shareLinkJson(named(link!)), alreadyRevoked };
  }
  throw new UsageError("share needs create, list or revoke");
}
