/**
 * Handing a mail to the SMTP server of SMTP_URL, with nodemailer: `smtp://`
 * upgrades with STARTTLS when the server offers it, `smtps://` speaks TLS
 * from the start; a user and password in the URL log in. A test may give
 * another transport.
 */
import nodemailer from "nodemailer";
import type { Mail } from "./report_mail.ts";

export interface OutgoingMail extends Mail {
  from: string;
  to: string;
  /** The Message-ID, the same on every try, so a receiver can tell a repeat. */
  messageId: string;
}

export interface MailTransport {
  /** Resolves once the server accepted the mail; rejects with its refusal. */
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

/** Seconds an SMTP conversation may take in each of its steps. */
const TIMEOUT_MS = 30_000;

export function smtpTransport(smtpUrl: string): MailTransport {
  const transporter = nodemailer.createTransport(
    {
      url: smtpUrl,
      connectionTimeout: TIMEOUT_MS,
      greetingTimeout: TIMEOUT_MS,
      socketTimeout: TIMEOUT_MS,
    } as Parameters<typeof nodemailer.createTransport>[0],
  );
  return {
    async send(mail) {
      const info = await transporter.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
      });
      if (info.rejected.length > 0) {
        throw new Error(`the server refused ${info.rejected.join(", ")}`);
      }
    },
    close: () => transporter.close(),
  };
}
