import { describe, expect, it } from "vitest";
import { reasonOf } from "../../lib/errors.ts";
import { mailAdminHandlers } from "./admin.ts";
import type { MailWorker } from "./worker.ts";

/** A worker that records what it was asked to send. */
function fakeWorker(calls: unknown[][]): MailWorker {
  return {
    sendReports: (siteId: string, every?: string) => {
      calls.push([siteId, every]);
      return Promise.resolve(2);
    },
  } as unknown as MailWorker;
}

const refusal = (promise: Promise<unknown>) =>
  promise.then(() => undefined, (error) => reasonOf(error)?.reason);

describe("MailAdminService.SendReports", () => {
  it("sends the period asked for, or every recipient's own, and answers the count", async () => {
    const calls: unknown[][] = [];
    const handlers = mailAdminHandlers({
      worker: fakeWorker(calls),
      mailOn: true,
      siteExists: (id) => Promise.resolve(id === "demo"),
    });
    // deno-lint-ignore no-explicit-any
    const send = (request: any) => (handlers.sendReports as any)(request, {});
    expect(await send({ siteId: "demo", period: "week" })).toEqual({ sent: 2n });
    expect(await send({ siteId: "demo", period: "" })).toEqual({ sent: 2n });
    expect(calls).toEqual([["demo", "week"], ["demo", undefined]]);
    expect(await refusal(send({ siteId: "demo", period: "day" }))).toBe("invalid_period");
    expect(await refusal(send({ siteId: "other", period: "" }))).toBe("site_not_found");
  });

  it("refuses without SMTP_URL, sending nothing", async () => {
    const calls: unknown[][] = [];
    const handlers = mailAdminHandlers({
      worker: fakeWorker(calls),
      mailOn: false,
      siteExists: () => Promise.resolve(true),
    });
    // deno-lint-ignore no-explicit-any
    const send = (request: any) => (handlers.sendReports as any)(request, {});
    expect(await refusal(send({ siteId: "demo", period: "" }))).toBe("mail_off");
    expect(calls).toEqual([]);
  });
});
