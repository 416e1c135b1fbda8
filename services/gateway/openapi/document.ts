/**
 * The OpenAPI 3.1 document of every public route of the gateway: the gateway
 * serves it at GET /openapi.json (serve.ts), CI lints it (`deno task
 * openapi:lint`), the HTTP tests check every answer they see against it
 * (test/helpers/openapi.ts), and the TypeScript client's types are generated
 * from it (clients/typescript).
 *
 * Its paths are made from the gateway's route table (routes/mod.ts, by
 * openapi/paths.ts), its schemas come by area from openapi/schemas/, and what
 * every route shares (headers, the refusals of the HTTP layer) from
 * components.ts, so nothing is stated twice.
 */
import { GATEWAY_ROUTES } from "../routes/mod.ts";
import { HEADERS, SHARED_RESPONSES } from "./components.ts";
import { pathsOf } from "./paths.ts";
import { DOCUMENT_SCHEMAS, ERROR_SCHEMAS, PROBE_SCHEMAS } from "./schemas/common.ts";
import { CONTENT_SCHEMAS } from "./schemas/content.ts";
import { MARKETING_SCHEMAS } from "./schemas/marketing.ts";
import { STATS_SCHEMAS } from "./schemas/stats.ts";

const SCHEMAS = {
  ...ERROR_SCHEMAS,
  ...CONTENT_SCHEMAS,
  ...MARKETING_SCHEMAS,
  ...STATS_SCHEMAS,
  ...PROBE_SCHEMAS,
  ...DOCUMENT_SCHEMAS,
};

/** The tags of the operations, in the document's order. */
const TAGS = [
  { name: "content", description: "The read-only content API, by site key." },
  { name: "marketing", description: "Page views, custom events and leads." },
  { name: "reports", description: "Reports and funnels, by report key." },
  { name: "health", description: "Probes for load balancers and orchestrators." },
  { name: "assets", description: "Scripts, pages and this document." },
];

export const OPENAPI_DOCUMENT = {
  openapi: "3.1.1",
  info: {
    title: "CRM gateway",
    version: "1.0.0",
    summary: "Content, analytics collection, reports and health of the CRM's public gateway.",
    description: "Every public route of the gateway. Every JSON body has a schema, errors " +
      'included: an error is `{"message": REASON, ...}` with `Cache-Control: no-store`. ' +
      "JSON answers of 1 KB or more, the widget and the dashboard's files are compressed " +
      "(`br`, else `gzip`) when Accept-Encoding allows (never a coding it gives `q=0`), with " +
      "`Vary: Accept-Encoding`; every encoding of an answer has its own strong " +
      "ETag, and If-None-Match with any of them answers 304. A path that names no route " +
      'answers 404 `{"message": "Cannot GET /path", "error": "Not Found", ' +
      '"statusCode": 404}`. Every answer carries X-Request-Id.',
    license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
  },
  servers: [{ url: "http://127.0.0.1:8080", description: "`deno task start`" }],
  tags: TAGS,
  paths: pathsOf(GATEWAY_ROUTES),
  components: {
    schemas: SCHEMAS,
    headers: HEADERS,
    responses: SHARED_RESPONSES,
    securitySchemes: {
      siteKey: {
        type: "apiKey",
        in: "header",
        name: "x-crm-key",
        description: "A site key: `pk_` and 32 lowercase hex characters; or on the content " +
          "routes a preview key, `pv_` and 32 lowercase hex: drafts and scheduled posts are " +
          "visible too, each post with its status, and answers are `private, no-store`.",
      },
      siteKeyQuery: {
        type: "apiKey",
        in: "query",
        name: "key",
        description: "The site key as a query parameter, for clients that cannot set headers.",
      },
      secretKey: {
        type: "apiKey",
        in: "header",
        name: "x-event-key",
        description: "A secret key: `sk_` and 48 hex characters.",
      },
      reportKey: {
        type: "apiKey",
        in: "header",
        name: "x-report-key",
        description: "A report key: `rk_` and 48 lowercase hex characters.",
      },
      shareLink: {
        type: "apiKey",
        in: "header",
        name: "x-share-link",
        description: "A share link (`sh_` and 32 lowercase hex characters), in place of a " +
          "report key: it reads its one site's reports; a link with a password also needs " +
          "`x-share-password`.",
      },
      sharePassword: {
        type: "apiKey",
        in: "header",
        name: "x-share-password",
        description: "The password of a share link that has one.",
      },
    },
  },
} as const;
