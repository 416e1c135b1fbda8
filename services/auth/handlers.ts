/** AuthService: key and origin resolution for the gateway. */
import type { ServiceImpl } from "@connectrpc/connect";
import type { AuthService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { Code, publicError } from "../lib/errors.ts";
import { hashKey, PREVIEW_KEY, REPORT_KEY, SECRET_KEY, SITE_KEY } from "../lib/keys.ts";
import type { Resolver } from "./resolver.ts";
import { hostOfOrigin } from "../lib/origin.ts";

const invalidKey = () => publicError(Code.Unauthenticated, "invalid_key");
const unknownDomain = () => publicError(Code.InvalidArgument, "unknown_domain");

export function authHandlers(
  resolver: Resolver,
): Omit<ServiceImpl<typeof AuthService>, "resolveShareLink" | "describeShareLink"> {
  return {
    async resolveSiteKey({ key }) {
      if (!SITE_KEY.test(key)) throw invalidKey();
      const { siteId, until } = await resolver.siteForKey("site", hashKey(key));
      if (!siteId) throw invalidKey();
      return { siteId, cacheUntilMs: BigInt(until) };
    },
    async resolveSecretKey({ key }) {
      if (!SECRET_KEY.test(key)) throw invalidKey();
      const { siteId, until } = await resolver.siteForKey("secret", hashKey(key));
      if (!siteId) throw invalidKey();
      return { siteId, cacheUntilMs: BigInt(until) };
    },
    async resolveReportKey({ key }) {
      if (!REPORT_KEY.test(key)) throw invalidKey();
      const { siteId, until } = await resolver.siteForKey("report", hashKey(key));
      if (!siteId) throw invalidKey();
      return { siteId, cacheUntilMs: BigInt(until) };
    },
    async resolvePreviewKey({ key }) {
      if (!PREVIEW_KEY.test(key)) throw invalidKey();
      const { siteId, until } = await resolver.siteForKey("preview", hashKey(key));
      if (!siteId) throw invalidKey();
      return { siteId, cacheUntilMs: BigInt(until) };
    },
    async resolveOrigin({ origin }) {
      const host = hostOfOrigin(origin);
      if (!host) throw unknownDomain();
      const { siteId, until } = await resolver.siteForHost(host);
      if (!siteId) throw unknownDomain();
      return { siteId, cacheUntilMs: BigInt(until) };
    },
  };
}
