/**
 * The probes (health.ts): /healthz and /livez answer every method as GET (a
 * prober may send any) and are never refused for load or rate.
 */
import { header, type Json, jsonAnswer, response } from "../openapi/components.ts";
import { NO_STORE, type RouteEntry } from "./table.ts";

const HEALTH_TAG = "health";

/** The probes, each a handler of health.ts. */
export type Probe = "healthz" | "livez";

const probe = (id: string, summary: string, description: string, responses: Json): Json => ({
  tags: [HEALTH_TAG],
  operationId: id,
  summary,
  description,
  security: [],
  responses: { ...responses, "414": response("UrlTooLong"), "431": response("HeadersTooLarge") },
});
const healthAnswer = (description: string) => jsonAnswer("Health", description);
const HEALTHZ_TEXT = "Readiness: 503 until every service behind the gateway has answered its " +
  "health check SERVING once; then 200 while the gateway can serve, `degraded` while a " +
  "backend is not serving. Never refused for load or rate.";
const headers = { "X-Request-Id": header("RequestId") };

export const PROBE_ROUTES: readonly RouteEntry<Probe>[] = [
  {
    path: "/healthz",
    name: "Health",
    tag: HEALTH_TAG,
    exact: true,
    otherMethodsAs: "GET",
    methods: {
      GET: {
        handler: "healthz",
        cache: NO_STORE,
        answer: "Health",
        operation: probe("getHealth", "Readiness", HEALTHZ_TEXT, {
          "200": healthAnswer("Ready: `ok` or `degraded`."),
          "503": healthAnswer("Not ready (`unavailable`, `stopping`)."),
        }),
      },
      HEAD: {
        handler: "healthz",
        cache: NO_STORE,
        operation: probe("headHealth", "Readiness (headers only)", HEALTHZ_TEXT, {
          "200": { description: "Ready.", headers },
          "503": { description: "Not ready.", headers },
        }),
      },
    },
  },
  {
    path: "/livez",
    name: "Live",
    tag: HEALTH_TAG,
    exact: true,
    otherMethodsAs: "GET",
    methods: {
      GET: {
        handler: "livez",
        cache: NO_STORE,
        answer: "Live",
        operation: probe("getLive", "Liveness", "200 while the process runs.", {
          "200": jsonAnswer("Live", "Alive."),
        }),
      },
      HEAD: {
        handler: "livez",
        cache: NO_STORE,
        operation: probe("headLive", "Liveness (headers only)", "200 while the process runs.", {
          "200": { description: "Alive.", headers },
        }),
      },
    },
  },
];
