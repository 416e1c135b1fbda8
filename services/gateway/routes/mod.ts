/**
 * The gateway's route table: every route it answers, by area. Dispatch
 * (dispatch.ts) and the OpenAPI document's paths (openapi/paths.ts) are both
 * made from it; docs/development.md tells how to add a route.
 */
import { CONTENT_CORS_POLICY } from "../cors.ts";
import type { Handler } from "../http.ts";
import { CONTENT_PREFIX, CONTENT_ROUTES, type ContentRead } from "./content.ts";
import type { Area } from "./dispatch.ts";
import { type File, FILE_ROUTES } from "./files.ts";
import { type Collect, MARKETING_ROUTES } from "./marketing.ts";
import { type Probe, PROBE_ROUTES } from "./probes.ts";
import { type Report, STATS_ROUTES } from "./stats.ts";
import type { RouteEntry } from "./table.ts";

/** Every handler a route of the table names. */
export type HandlerName = ContentRead | Collect | Report | Probe | File;

/** The handlers the gateway supplies (main.ts): one for each name, undefined only for an undocumented route. */
export type GatewayHandlers = Readonly<Record<HandlerName, Handler | undefined>>;

export const GATEWAY_ROUTES: readonly RouteEntry<HandlerName>[] = [
  ...CONTENT_ROUTES,
  ...MARKETING_ROUTES,
  ...STATS_ROUTES,
  ...PROBE_ROUTES,
  ...FILE_ROUTES,
];

/** Areas whose unrouted paths keep a policy: the content API's CORS covers any path under it. */
export const GATEWAY_AREAS: readonly Area[] = [{
  prefix: CONTENT_PREFIX,
  cors: CONTENT_CORS_POLICY,
}];
