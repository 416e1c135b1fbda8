/**
 * Typed service errors. A service throws `publicError(code, reason, fields)`;
 * the reason and its typed fields travel as an ErrorDetail in the Connect
 * error, and the gateway alone turns them into an HTTP status and JSON body.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type ErrorDetail, ErrorDetailSchema } from "./gen/crm/common/v1/error_pb.ts";

export { Code, ConnectError };

/** The typed fields of a reason: one case of ErrorDetail.fields, e.g. `limit(50)`. */
export type ErrorFields = NonNullable<MessageInitShape<typeof ErrorDetailSchema>["fields"]>;

/** invalid_body, invalid_query: the body field at fault and what is wrong with it. */
export const fieldProblem = (field: string, problem: string): ErrorFields => ({
  case: "fieldProblem",
  value: { field, problem },
});

/** invalid_manifest: the JSON path of the first fault. */
export const manifestProblem = (path: string, problem: string): ErrorFields => ({
  case: "manifestProblem",
  value: { path, problem },
});

/** too_many_langs, too_many_secret_keys. */
export const limit = (max: number): ErrorFields => ({ case: "limit", value: { max } });

export const siteNotFound = (siteId: string): ErrorFields => ({
  case: "siteNotFound",
  value: { siteId },
});

export function publicError(code: Code, reason: string, fields?: ErrorFields): ConnectError {
  return new ConnectError(reason, code, undefined, [
    { desc: ErrorDetailSchema, value: { reason, fields } },
  ]);
}

export type PublicFields = Record<string, unknown>;

/** The fields of a detail as the public JSON body carries them, in their declared order. */
export function publicFields(detail: ErrorDetail | undefined): PublicFields {
  const fields = detail?.fields;
  switch (fields?.case) {
    case "fieldProblem":
      return { field: fields.value.field, problem: fields.value.problem };
    case "manifestProblem":
      return { path: fields.value.path, problem: fields.value.problem };
    case "invalidLanguage":
      return { lang: fields.value.lang };
    case "unknownLanguages":
      return {
        lang: fields.value.lang,
        unknown: [...fields.value.unknown],
        available: [...fields.value.available],
      };
    case "limit":
      return { max: fields.value.max };
    case "unknownEvent":
      return { name: fields.value.name };
    case "siteNotFound":
      return { siteId: fields.value.siteId };
    default:
      return {};
  }
}

export interface ErrorReason {
  code: Code;
  reason: string;
  /** The public fields (publicFields of detail). */
  fields: PublicFields;
  detail: ErrorDetail;
}

/** The reason and fields of an error from a service, or undefined when it carries none. */
export function reasonOf(error: unknown): ErrorReason | undefined {
  const connectError = ConnectError.from(error);
  const [detail] = connectError.findDetails(ErrorDetailSchema);
  if (!detail) return undefined;
  return { code: connectError.code, reason: detail.reason, fields: publicFields(detail), detail };
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
