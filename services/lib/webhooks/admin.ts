/**
 * crm.webhooks.v1.WebhookAdminService over one service's outbox: the
 * attempts `deno task admin webhooks log` prints.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { WebhookAdminService } from "../gen/crm/webhooks/v1/webhooks_pb.ts";
import type { Queryable } from "../db/mod.ts";
import { Code, publicError, siteNotFound } from "../errors.ts";
import { attemptPage } from "./outbox.ts";

const DEFAULT_PAGE = 1000;
const MAX_PAGE = 10_000;

export function webhookAdminHandlers(options: {
  db: Queryable;
  schema: string;
  siteExists(siteId: string): Promise<boolean>;
}): ServiceImpl<typeof WebhookAdminService> {
  return {
    async listAttempts(request) {
      if (!(await options.siteExists(request.siteId))) {
        throw publicError(Code.NotFound, "site_not_found", siteNotFound(request.siteId));
      }
      let page;
      try {
        page = await attemptPage(options.db, options.schema, {
          siteId: request.siteId,
          sinceMs: request.sinceMs === undefined ? undefined : Number(request.sinceMs),
          cursor: request.cursor,
          pageSize: Math.min(MAX_PAGE, Math.max(1, request.pageSize || DEFAULT_PAGE)),
        });
      } catch (error) {
        if ((error as Error).message === "malformed attempts cursor") {
          throw publicError(Code.InvalidArgument, "invalid_cursor");
        }
        throw error;
      }
      return {
        attempts: page.rows.map((r) => ({
          messageId: r.id,
          type: r.type,
          url: r.url,
          attempt: r.attempt,
          status: r.status ?? undefined,
          error: r.error ?? undefined,
          at: timestampFromMs(r.at),
        })),
        nextCursor: page.nextCursor,
      };
    },
  };
}
