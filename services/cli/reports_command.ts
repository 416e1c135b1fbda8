/**
 * `deno task admin reports send SITE_ID [--period week|month]`: the site's
 * email reports of the last complete period, sent now (ingest-service sends
 * them; the once rule holds), printing `{"sent": N}`.
 */
import { parseArgs } from "node:util";
import type { AdminClients } from "./admin_clients.ts";
import { UsageError } from "./analytics_commands.ts";
import { reasonOf } from "../lib/errors.ts";

/** Sending many reports may take a while: the SMTP server answers each. */
const SEND_TIMEOUT_MS = 10 * 60_000;

export async function reportsCommand(clients: AdminClients, args: string[]): Promise<unknown> {
  const [action, ...rest] = args;
  if (action !== "send") throw new UsageError("reports needs send");
  const { values, positionals } = parseArgs({
    args: rest,
    options: { period: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError("expected SITE_ID");
  const period = values.period ?? "";
  if (period !== "" && period !== "week" && period !== "month") {
    throw new UsageError("--period must be week or month");
  }
  try {
    const answer = await clients.mail.sendReports(
      { siteId: positionals[0], period },
      { timeoutMs: SEND_TIMEOUT_MS },
    );
    return { sent: Number(answer.sent) };
  } catch (error) {
    if (reasonOf(error)?.reason === "mail_off") {
      throw new Error("mail is off: the ingest service has no SMTP_URL");
    }
    throw error;
  }
}
