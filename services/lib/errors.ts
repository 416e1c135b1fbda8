/**
 * Typed service errors. A service throws `publicError(code, reason, fields)`;
 * the reason and fields travel as an ErrorDetail in the Connect error, and the
 * gateway alone turns them into an HTTP status and JSON body.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "./gen/crm/common/v1/error_pb.ts";

export { Code, ConnectError };

export type ErrorFields = Record<string, unknown>;

export function publicError(code: Code, reason: string, fields?: ErrorFields): ConnectError {
  return new ConnectError(reason, code, undefined, [
    {
      desc: ErrorDetailSchema,
      value: { reason, fieldsJson: fields ? JSON.stringify(fields) : "" },
    },
  ]);
}

export interface ErrorReason {
  code: Code;
  reason: string;
  fields: ErrorFields;
}

/** The reason and fields of an error from a service, or undefined when it carries none. */
export function reasonOf(error: unknown): ErrorReason | undefined {
  const connectError = ConnectError.from(error);
  const [detail] = connectError.findDetails(ErrorDetailSchema);
  if (!detail) return undefined;
  let fields: ErrorFields = {};
  if (detail.fieldsJson) {
    try {
      fields = JSON.parse(detail.fieldsJson);
    } catch {
      fields = {};
    }
  }
  return { code: connectError.code, reason: detail.reason, fields };
}

/** A one-line description of any error, for command-line output and logs. */
export function describeError(error: unknown): string {
  const reason = reasonOf(error);
  if (reason) {
    const extra = Object.keys(reason.fields).length ? ` ${JSON.stringify(reason.fields)}` : "";
    return `${reason.reason}${extra}`;
  }
  if (error instanceof ConnectError) return `${Code[error.code]}: ${error.rawMessage}`;
  if (error instanceof Error) return error.message;
  return String(error);
}
