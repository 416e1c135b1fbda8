/**
 * `deno task admin webhooks log SITE_ID [--since ISO]`: every delivery
 * attempt of the site's webhook messages as NDJSON, oldest first. content
 * and ingest each keep the attempts of their own outbox; their pages are
 * merged by time as they stream, so only a page of each is held at once.
 */
import { parseArgs } from "node:util";
import type { Client } from "@connectrpc/connect";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type {
  DeliveryAttempt,
  WebhookAdminService,
} from "../lib/gen/crm/webhooks/v1/webhooks_pb.ts";
import type { AdminClients } from "./admin_clients.ts";
import type { CommandIo } from "./command_io.ts";
import { sinceOf, UsageError } from "./analytics_commands.ts";

const PAGE_TIMEOUT_MS = 5 * 60_000;

/** One service's attempts, page after page, in its order (oldest first). */
async function* attemptsOf(
  client: Client<typeof WebhookAdminService>,
  siteId: string,
  sinceMs: bigint | undefined,
): AsyncGenerator<DeliveryAttempt> {
  let cursor = "";
  do {
    const page = await client.listAttempts(
      { siteId, sinceMs, cursor },
      { timeoutMs: PAGE_TIMEOUT_MS },
    );
    yield* page.attempts;
    cursor = page.nextCursor;
  } while (cursor !== "");
}

const atOf = (a: DeliveryAttempt) => a.at ? timestampMs(a.at) : 0;

/** The attempts of every stream, merged by time: each stream is already in order. */
export async function* mergeByTime(
  streams: AsyncGenerator<DeliveryAttempt>[],
): AsyncGenerator<DeliveryAttempt> {
  const heads = await Promise.all(streams.map((s) => s.next()));
  for (;;) {
    let first = -1;
    heads.forEach((head, i) => {
      if (head.done) return;
      if (first === -1 || atOf(head.value) < atOf(heads[first].value as DeliveryAttempt)) first = i;
    });
    if (first === -1) return;
    yield heads[first].value as DeliveryAttempt;
    heads[first] = await streams[first].next();
  }
}

/** An attempt as `webhooks log` prints it. */
export function attemptJson(a: DeliveryAttempt): Record<string, unknown> {
  return {
    id: a.messageId,
    type: a.type,
    url: a.url,
    attempt: a.attempt,
    status: a.status ?? null,
    error: a.error ?? null,
    at: new Date(atOf(a)).toISOString(),
  };
}

export async function webhooksCommand(
  clients: AdminClients,
  args: string[],
  io: CommandIo,
): Promise<undefined> {
  const [action, ...rest] = args;
  if (action !== "log") throw new UsageError("webhooks needs log");
  const { values, positionals } = parseArgs({
    args: rest,
    options: { since: { type: "string" } },
    allowPositionals: true,
  });
  if (positionals.length !== 1) throw new UsageError("expected SITE_ID [--since ISO]");
  const since = sinceOf(values.since);
  const streams = clients.webhooks.map((c) => attemptsOf(c, positionals[0], since));
  let lines: string[] = [];
  for await (const attempt of mergeByTime(streams)) {
    lines.push(JSON.stringify(attemptJson(attempt)));
    if (lines.length >= 1000) {
      await io.stdout.write(lines.join("\n") + "\n");
      lines = [];
    }
  }
  if (lines.length > 0) await io.stdout.write(lines.join("\n") + "\n");
  return undefined;
}
