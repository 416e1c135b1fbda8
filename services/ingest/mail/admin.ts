/**
 * crm.mail.v1.MailAdminService: `deno task admin reports send`.
 */
import type { ServiceImpl } from "@connectrpc/connect";
import type { MailAdminService } from "../../lib/gen/crm/mail/v1/mail_pb.ts";
import { Code, fieldProblem, publicError, siteNotFound } from "../../lib/errors.ts";
import type { MailWorker } from "./worker.ts";
import { EVERY, type Every } from "./schedule.ts";

export function mailAdminHandlers(options: {
  worker: MailWorker;
  /** False without SMTP_URL. */
  mailOn: boolean;
  siteExists(siteId: string): Promise<boolean>;
}): ServiceImpl<typeof MailAdminService> {
  return {
    async sendReports({ siteId, period }) {
      if (period !== "" && !(EVERY as readonly string[]).includes(period)) {
        throw publicError(
          Code.InvalidArgument,
          "invalid_period",
          fieldProblem("period", "must be week or month"),
        );
      }
      if (!(await options.siteExists(siteId))) {
        throw publicError(Code.NotFound, "site_not_found", siteNotFound(siteId));
      }
      if (!options.mailOn) {
        throw publicError(Code.FailedPrecondition, "mail_off");
      }
      const sent = await options.worker.sendReports(
        siteId,
        period === "" ? undefined : period as Every,
      );
      return { sent: BigInt(sent) };
    },
  };
}
