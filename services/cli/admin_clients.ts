/** Clients for the services' admin RPCs, reached through AUTH_URL, CONTENT_URL and INGEST_URL. */
import type { Client } from "@connectrpc/connect";
import { AuthAdminService } from "../lib/gen/crm/auth/v1/auth_pb.ts";
import { ContentAdminService } from "../lib/gen/crm/content/v1/content_pb.ts";
import { IngestAdminService } from "../lib/gen/crm/ingest/v1/ingest_pb.ts";
import type { Config } from "../lib/config.ts";
import { serviceClient } from "../lib/rpc/client.ts";

export interface AdminClients {
  auth: Client<typeof AuthAdminService>;
  content: Client<typeof ContentAdminService>;
  ingest: Client<typeof IngestAdminService>;
}

export function adminClients(config: Config, timeoutMs = 120_000): AdminClients {
  const options = { adminToken: config.adminToken, timeoutMs };
  return {
    auth: serviceClient(AuthAdminService, config.authUrl, options),
    content: serviceClient(ContentAdminService, config.contentUrl, options),
    ingest: serviceClient(IngestAdminService, config.ingestUrl, options),
  };
}
