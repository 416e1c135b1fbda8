/**
 * The one place where typed service errors become HTTP: the status follows
 * the Connect code, the body is the public reason and its fields.
 */
import { Code, ConnectError, reasonOf } from "../lib/errors.ts";

const STATUS: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.FailedPrecondition]: 400,
  [Code.OutOfRange]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 504,
};

export interface HttpError {
  status: number;
  body: { message: string; [field: string]: unknown };
  /** True for failures of the service side, worth a log line. */
  serverSide: boolean;
}

/** The HTTP form of a refusal carried as a code and reason (a batch item's result). */
export function httpErrorOfReason(
  code: Code,
  reason: string,
  fields: Record<string, unknown> = {},
): HttpError {
  return { status: STATUS[code] ?? 500, body: { message: reason, ...fields }, serverSide: false };
}

export function httpErrorOf(error: unknown): HttpError {
  const reason = reasonOf(error);
  if (reason) {
    return {
      status: STATUS[reason.code] ?? 500,
      body: { message: reason.reason, ...reason.fields },
      serverSide: false,
    };
  }
  // Anything that is not a service's answer is the gateway's own fault.
  if (!(error instanceof ConnectError)) {
    return { status: 500, body: { message: "internal_error" }, serverSide: true };
  }
  const code = error.code;
  if (code === Code.Unavailable) {
    return { status: 503, body: { message: "service_unavailable" }, serverSide: true };
  }
  if (code === Code.DeadlineExceeded || code === Code.Canceled) {
    return { status: 504, body: { message: "upstream_timeout" }, serverSide: true };
  }
  return { status: 502, body: { message: "upstream_error" }, serverSide: true };
}
