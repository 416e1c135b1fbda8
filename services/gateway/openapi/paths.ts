/**
 * The document's `paths`, made from the route table: each entry's methods
 * with their operations, its path parameters, its CORS preflight, and for
 * every method it does not answer either the 405 refusal (Allow naming the
 * methods it does) or, for a route that answers any method, its answer.
 */
import {
  allowedMethods,
  preflightMethods,
  ROUTE_METHODS,
  type RouteEntry,
} from "../routes/table.ts";
import { always, header, type Json, METHODS, refusalCors, refusedMethod } from "./components.ts";

/** `/content/v1/pages/:marker` as OpenAPI writes it: `/content/v1/pages/{marker}`. */
export function documentPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

function pathParameters(entry: RouteEntry): Json[] {
  return [...entry.path.matchAll(/:([A-Za-z0-9_]+)/g)].map(([, name]) => {
    const description = entry.params?.[name];
    if (!description) throw new Error(`${entry.path}: the parameter ${name} has no description`);
    return { name, in: "path", required: true, description, schema: { type: "string" } };
  });
}

function preflightOperation(entry: RouteEntry): Json {
  const policy = entry.cors!;
  const preflight = policy.preflight!;
  return {
    tags: [entry.tag],
    operationId: `preflight${entry.name}`,
    summary: "CORS preflight",
    ...(preflight.note ? { description: preflight.note } : {}),
    security: [],
    responses: {
      "204": {
        description: preflight.describe(preflightMethods(entry)),
        headers: {
          "X-Request-Id": header("RequestId"),
          "Access-Control-Allow-Origin": header(
            policy.origin === "any" ? "AnyOrigin" : "EchoedOrigin",
          ),
          "Access-Control-Allow-Methods": header("AllowMethods"),
          "Access-Control-Allow-Headers": header("AllowHeaders"),
          "Access-Control-Max-Age": header("MaxAge"),
        },
      },
      ...always(),
    },
  };
}

export function pathItem(entry: RouteEntry): Json {
  const item: Json = {};
  const parameters = pathParameters(entry);
  if (parameters.length > 0) item.parameters = parameters;
  for (const method of ROUTE_METHODS) {
    const route = entry.methods[method];
    if (route) item[method.toLowerCase()] = route.operation;
  }
  if (entry.cors?.preflight) item.options = preflightOperation(entry);
  const allow = allowedMethods(entry).join(", ");
  const as = entry.otherMethodsAs && item[entry.otherMethodsAs.toLowerCase()];
  for (const method of METHODS) {
    if (item[method]) continue;
    item[method] = as ? { ...as, operationId: `${as.operationId}By${method}` } : {
      operationId: `${method}${entry.name}Refused`,
      ...refusedMethod(
        allow,
        refusalCors(entry.cors),
        `${method.toUpperCase()} is not allowed`,
        entry.tag,
      ),
    };
  }
  return item;
}

/** Every documented route of table, by its path. */
export function pathsOf(table: readonly RouteEntry[]): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const entry of table) {
    if (entry.undocumented) continue;
    const path = documentPath(entry.path);
    if (paths[path]) throw new Error(`${path} is in the route table twice`);
    paths[path] = pathItem(entry);
  }
  return paths;
}
