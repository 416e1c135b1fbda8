/**
 * The route table against the OpenAPI document and the dispatcher: every
 * route of the table is documented as declared and dispatched to the
 * handler it names, and the document names no route the table lacks.
 */
import { describe, expect, it } from "vitest";
import { OPENAPI_DOCUMENT } from "../openapi/document.ts";
import { documentPath } from "../openapi/paths.ts";
import type { Handler, RequestContext } from "../http.ts";
import { dispatcher } from "./dispatch.ts";
import { GATEWAY_AREAS, GATEWAY_ROUTES, type GatewayHandlers, type HandlerName } from "./mod.ts";
import { allowedMethods, preflightMethods, ROUTE_METHODS } from "./table.ts";

// deno-lint-ignore no-explicit-any
type Json = any;
const paths = OPENAPI_DOCUMENT.paths as Record<string, Json>;

/** Handlers that answer with their own name and what the dispatcher told them. */
function namedHandlers(): GatewayHandlers {
  const names = new Set(
    GATEWAY_ROUTES.flatMap((e) => Object.values(e.methods).map((m) => m!.handler)),
  );
  const handlers: Partial<Record<HandlerName, Handler>> = {};
  for (const name of names) {
    handlers[name] = (ctx) =>
      Response.json({ handler: name, route: ctx.route, params: ctx.match?.params });
  }
  return handlers as GatewayHandlers;
}

const dispatch = dispatcher(GATEWAY_ROUTES, namedHandlers(), GATEWAY_AREAS);

async function send(method: string, path: string, headers: Record<string, string> = {}) {
  const url = new URL(`http://gateway.test${path}`);
  const ctx: RequestContext = {
    request: new Request(url, { method, headers }),
    url,
    ip: "127.0.0.1",
    requestId: "r",
    connection: "c",
    startedAt: 0,
  };
  return await dispatch(ctx);
}

/** A concrete path of a pattern: each parameter `x` becomes `value-of-x`, a rest `a/b`. */
const concrete = (path: string) =>
  path.replace(/:([A-Za-z0-9_]+)/g, "value-of-$1").replace(/\*$/, "a/b");

describe("the route table", () => {
  it("is the document's paths: every documented route, and nothing else", () => {
    const documented = GATEWAY_ROUTES.filter((e) => !e.undocumented).map((e) =>
      documentPath(e.path)
    );
    expect(Object.keys(paths)).toEqual(documented);
  });

  it("documents each method as declared: its operation, request and answer schemas", () => {
    for (const entry of GATEWAY_ROUTES.filter((e) => !e.undocumented)) {
      const item = paths[documentPath(entry.path)];
      for (const method of ROUTE_METHODS) {
        const route = entry.methods[method];
        if (!route) continue;
        const operation = item[method.toLowerCase()];
        const where = `${method} ${entry.path}`;
        expect(operation, where).toBe(route.operation);
        const body = JSON.stringify(operation.requestBody ?? null);
        if (route.request) {
          expect(body, where).toContain(`#/components/schemas/${route.request.schema}`);
          expect(body, where).toContain(`${route.request.limit / 1024} KB at most`);
          expect(JSON.stringify(operation.responses["413"]), where).toContain(
            `over ${route.request.limit / 1024} KB`,
          );
        } else {
          expect(operation.requestBody, where).toBeUndefined();
        }
        const success = Object.entries<Json>(operation.responses)
          .filter(([status]) => status.startsWith("2"))
          .map(([, answer]) => JSON.stringify(answer.content ?? null));
        if (route.answer) {
          expect(success.join(), where).toContain(`#/components/schemas/${route.answer}"`);
        }
        expect(OPENAPI_DOCUMENT.components.schemas, where).toHaveProperty(
          route.answer ?? "Error",
        );
      }
      // Methods the route does not answer are documented as refused, or as answered alike.
      for (const method of ["get", "head", "post", "put", "patch", "delete", "options"]) {
        expect(item[method], `${method} ${entry.path}`).toBeDefined();
      }
    }
  });

  it("dispatches every method of every route to its handler, with its parameters", async () => {
    for (const entry of GATEWAY_ROUTES) {
      const path = concrete(entry.path);
      for (const method of ROUTE_METHODS) {
        const route = entry.methods[method];
        const answer = await send(method, path, { origin: "https://a.example" });
        if (route) {
          expect(answer.status, `${method} ${path}`).toBe(200);
          const seen = await answer.json();
          expect(seen.handler).toBe(route.handler);
          expect(seen.route).toBe(entry.path);
          for (const [, name] of entry.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
            expect(seen.params[name]).toBe(`value-of-${name}`);
          }
        } else if (entry.otherMethodsAs) {
          expect((await answer.json()).handler).toBe(entry.methods[entry.otherMethodsAs]!.handler);
        } else {
          expect(answer.status, `${method} ${path}`).toBe(405);
          expect(answer.headers.get("allow")).toBe(allowedMethods(entry).join(", "));
          expect(answer.headers.has("access-control-allow-origin")).toBe(
            entry.cors?.onRefusals === true,
          );
        }
      }
      const preflight = await send("OPTIONS", path, { origin: "https://a.example" });
      if (entry.cors?.preflight) {
        expect(preflight.status, `OPTIONS ${path}`).toBe(204);
        expect(preflight.headers.get("access-control-allow-methods")).toBe(
          preflightMethods(entry).join(", "),
        );
        expect(preflight.headers.get("access-control-allow-headers")).toBe(
          entry.cors.preflight.allowHeaders,
        );
        expect(preflight.headers.get("access-control-allow-origin")).toBe(
          entry.cors.origin === "any" ? "*" : "https://a.example",
        );
      } else if (!entry.otherMethodsAs) {
        expect(preflight.status, `OPTIONS ${path}`).toBe(405);
      }
    }
  });

  it("tolerates one trailing slash on API routes, none on files and probes", async () => {
    const own = new Set(GATEWAY_ROUTES.map((e) => e.path));
    for (const entry of GATEWAY_ROUTES.filter((e) => !own.has(`${e.path}/`))) {
      const method = Object.keys(entry.methods)[0];
      const answer = await send(method, `${concrete(entry.path)}/`);
      expect(answer.status, entry.path).toBe(entry.exact ? 404 : 200);
    }
  });

  it("answers a path that names no route 404, with the CORS of the area it falls in", async () => {
    const outside = await send("GET", "/nowhere");
    expect(outside.status).toBe(404);
    expect(await outside.json()).toEqual({
      message: "Cannot GET /nowhere",
      error: "Not Found",
      statusCode: 404,
    });
    expect(outside.headers.get("access-control-allow-origin")).toBeNull();
    const inContent = await send("DELETE", "/content/v1/page/home");
    expect(inContent.status).toBe(404);
    expect(inContent.headers.get("access-control-allow-origin")).toBe("*");
    const preflight = await send("OPTIONS", "/content/anything");
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("GET, OPTIONS");
    expect((await send("OPTIONS", "/marketing/nowhere")).status).toBe(404);
  });

  it("gives every path parameter a description and every route a handler", () => {
    const handlers = namedHandlers();
    for (const entry of GATEWAY_ROUTES) {
      for (const [, name] of entry.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
        expect(entry.params?.[name], `${entry.path} ${name}`).toBeTruthy();
      }
      for (const route of Object.values(entry.methods)) {
        expect(handlers[route!.handler], route!.handler).toBeTypeOf("function");
      }
    }
    expect(() => dispatcher(GATEWAY_ROUTES, { ...handlers, page: undefined })).toThrow(
      /no handler page/,
    );
  });
});
