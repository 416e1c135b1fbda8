/**
 * The Mailpit helper against the real server: a mail handed to it over SMTP
 * (by nodemailer, as the system sends) is read back with both its parts, and
 * a refusal set through its chaos triggers refuses the next mail.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import nodemailer from "nodemailer";
import { MAILPIT, type Mailpit, startMailpit } from "./mailpit.ts";

describe.skipIf(!MAILPIT)("mailpit", () => {
  let mailpit: Mailpit;
  beforeAll(async () => {
    mailpit = await startMailpit();
  });
  afterAll(() => mailpit?.stop());

  it("receives a multipart mail and gives back its text and HTML", async () => {
    const transport = nodemailer.createTransport(mailpit.smtpUrl);
    await transport.sendMail({
      from: "reports@crm.example",
      to: "owner@site.example",
      subject: "Weekly report",
      text: "plain part",
      html: "<p>html part</p>",
    });
    transport.close();
    const [summary] = await mailpit.waitFor((m) => m.Subject === "Weekly report");
    expect(summary.To.map((a) => a.Address)).toEqual(["owner@site.example"]);
    const message = await mailpit.message(summary.ID);
    expect(message.Text.trim()).toBe("plain part");
    expect(message.HTML).toContain("<p>html part</p>");
    expect(await mailpit.raw(summary.ID)).toMatch(/multipart\/alternative/);
  });

  it("refuses mail while told to, and accepts it again", async () => {
    await mailpit.clear();
    const transport = nodemailer.createTransport(mailpit.smtpUrl);
    const mail = { from: "a@crm.example", to: "b@site.example", subject: "x", text: "x" };
    await mailpit.refuse(451);
    await expect(transport.sendMail(mail)).rejects.toThrow(/451/);
    await mailpit.refuse(null);
    await transport.sendMail(mail);
    transport.close();
    expect(await mailpit.messages()).toHaveLength(1);
  });
});
