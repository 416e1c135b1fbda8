/**
 * Clients for the services' admin RPCs, reached through AUTH_URL, CONTENT_URL
 * and INGEST_URL: each service's crm.admin.v1.SiteAdminService (migrate,
 * import, export), with auth's and ingest's own admin services beside it on
 * the same client, ingest-service's reports (crm.stats.v1), and the webhook
 * delivery logs of content and ingest (crm.webhooks.v1).
 */
import type { Client } from "@connectrpc/connect";
import { SiteAdminService } from "../lib/gen/crm/admin/v1/site_admin_pb.ts";
import { AuthAdminService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { IngestAdminService } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import { StatsService } from "../lib/gen/crm/stats/v1/stats_pb.ts";
import { WebhookAdminService } from "../lib/gen/crm/webhooks/v1/webhooks_pb.ts";
import { MailAdminService } from "../lib/gen/crm/mail/v1/mail_pb.ts";
import type { Config } from "../lib/config.ts";
import { serviceClient } from "../lib/rpc/client.ts";

export type SiteAdminClient = Client<typeof SiteAdminService>;

/** The services that store a part of a site, in the order an import applies them. */
export const SITE_SERVICES = ["auth", "content", "ingest"] as const;
export type SiteService = typeof SITE_SERVICES[number];

export type SiteAdminClients = Record<SiteService, SiteAdminClient>;

export interface AdminClients extends SiteAdminClients {
  auth: SiteAdminClient & Client<typeof AuthAdminService>;
  content: SiteAdminClient;
  ingest: SiteAdminClient & Client<typeof IngestAdminService>;
  stats: Client<typeof StatsService>;
  /** The services with an outbox: content.published and post.published, then lead.created. */
  webhooks: Client<typeof WebhookAdminService>[];
  /** Email reports (ingest-service). */
  mail: Client<typeof MailAdminService>;
}

export function adminClients(config: Config, timeoutMs = 120_000): AdminClients {
  const options = { adminToken: config.adminToken, timeoutMs };
  const site = (url: string) => serviceClient(SiteAdminService, url, options);
  return {
    auth: { ...site(config.authUrl), ...serviceClient(AuthAdminService, config.authUrl, options) },
    content: site(config.contentUrl),
    ingest: {
      ...site(config.ingestUrl),
      ...serviceClient(IngestAdminService, config.ingestUrl, options),
    },
    stats: serviceClient(StatsService, config.ingestUrl, options),
    webhooks: [config.contentUrl, config.ingestUrl].map((url) =>
      serviceClient(WebhookAdminService, url, options)
    ),
    mail: serviceClient(MailAdminService, config.ingestUrl, options),
  };
}
