/** The schemas every area shares (the error body) and those of the probes and this document. */
import type { Json } from "../components.ts";

export const ERROR_SCHEMAS: Record<string, Json> = {
  Error: {
    type: "object",
    description: "Every error body: `message` names the reason; some reasons add fields.",
    required: ["message"],
    additionalProperties: false,
    properties: {
      message: { type: "string", examples: ["invalid_key"] },
      field: {
        type: "string",
        description: "invalid_body, invalid_query: the body field at fault",
      },
      problem: { type: "string", description: "What is wrong with the body" },
      lang: { type: "string", description: "invalid_lang, unknown_lang: the value sent" },
      unknown: { type: "array", items: { type: "string" }, description: "unknown_lang" },
      available: { type: "array", items: { type: "string" }, description: "unknown_lang" },
      max: { type: "integer", description: "too_many_langs" },
      name: { type: "string", description: "unknown_event: the name sent" },
      siteId: { type: "string", description: "site_not_found" },
      path: { type: "string", description: "invalid_manifest: the JSON path of the first fault" },
      limit: { type: "integer", description: "url_too_long: bytes" },
      limits: {
        type: "object",
        description: "headers_too_large",
        required: ["fields", "bytes"],
        additionalProperties: false,
        properties: { fields: { type: "integer" }, bytes: { type: "integer" } },
      },
      error: { type: "string", const: "Not Found", description: "A path that names no route" },
      statusCode: { type: "integer", const: 404, description: "A path that names no route" },
    },
  },
};

export const PROBE_SCHEMAS: Record<string, Json> = {
  Health: {
    type: "object",
    required: ["status", "services"],
    additionalProperties: false,
    properties: {
      status: { type: "string", enum: ["ok", "degraded", "unavailable", "stopping"] },
      services: {
        type: "object",
        description: "Each backend's gRPC health state.",
        additionalProperties: {
          type: "string",
          enum: ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN", "UNREACHABLE"],
        },
      },
    },
  },
  Live: {
    type: "object",
    required: ["status"],
    additionalProperties: false,
    properties: { status: { const: "ok" } },
  },
};

export const DOCUMENT_SCHEMAS: Record<string, Json> = {
  OpenApiDocument: {
    type: "object",
    description: "This document.",
    required: ["openapi", "info", "paths"],
    properties: {
      openapi: { type: "string" },
      info: { type: "object" },
      paths: { type: "object" },
    },
  },
};
