/**
 * The one interceptor list every service's handlers pass through, and the one
 * every client call passes through. Cross-cutting work (request ids, logging,
 * the admin token, later tracing) is added here and nowhere else.
 */
import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log.ts";

export const REQUEST_ID_HEADER = "x-request-id";

/** The request id of the call being handled; set by requestIdInterceptor. */
export const requestIdKey = createContextKey<string>("", { description: "request id" });

function requestIdInterceptor(): Interceptor {
  return (next) => (request) => {
    const id = request.header.get(REQUEST_ID_HEADER) || crypto.randomUUID();
    request.contextValues.set(requestIdKey, id);
    return next(request);
  };
}

/**
 * Logs failed calls, and turns an unexpected exception into a plain INTERNAL
 * error so no stack or SQL text reaches a caller.
 */
function loggingInterceptor(log: Logger): Interceptor {
  return (next) => async (request) => {
    const started = performance.now();
    try {
      return await next(request);
    } catch (error) {
      const fields = {
        rpc: `${request.service.typeName}/${request.method.name}`,
        requestId: request.contextValues.get(requestIdKey),
        ms: Math.round(performance.now() - started),
      };
      if (
        error instanceof ConnectError && error.code !== Code.Internal && error.code !== Code.Unknown
      ) {
        log.debug("rpc refused", { ...fields, code: Code[error.code], reason: error.rawMessage });
        throw error;
      }
      log.error("rpc failed", { ...fields, error, stack: (error as Error)?.stack });
      if (error instanceof ConnectError) throw error;
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}

/** Compares in time independent of where the strings first differ. */
function constantTimeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

/**
 * The operator's services, which need the bearer token when ADMIN_TOKEN is
 * set: every service named *AdminService, in any package (the shared
 * crm.admin.v1.SiteAdminService and each service's own, e.g.
 * crm.ingest.v1.IngestAdminService). A service the gateway calls must not be
 * named so.
 */
export function isAdminService(typeName: string): boolean {
  return typeName.endsWith("AdminService");
}

function adminTokenInterceptor(adminToken: string | undefined): Interceptor {
  return (next) => (request) => {
    if (adminToken && isAdminService(request.service.typeName)) {
      const header = request.header.get("authorization") ?? "";
      const presented = header.startsWith("Bearer ") ? header.slice(7) : "";
      if (!constantTimeEqual(presented, adminToken)) {
        throw new ConnectError("admin token missing or wrong", Code.Unauthenticated);
      }
    }
    return next(request);
  };
}

export interface ServerInterceptorOptions {
  log: Logger;
  adminToken?: string;
}

export function serverInterceptors(options: ServerInterceptorOptions): Interceptor[] {
  return [
    requestIdInterceptor(),
    loggingInterceptor(options.log),
    adminTokenInterceptor(options.adminToken),
  ];
}

export interface ClientInterceptorOptions {
  adminToken?: string;
}

/** Client side: carry the admin token on admin calls. */
export function clientInterceptors(options: ClientInterceptorOptions): Interceptor[] {
  const list: Interceptor[] = [];
  if (options.adminToken) {
    const token = options.adminToken;
    list.push((next) => (request) => {
      if (isAdminService(request.service.typeName)) {
        request.header.set("authorization", `Bearer ${token}`);
      }
      return next(request);
    });
  }
  return list;
}
