/**
 * Setup of the integration and system tests: every answer of a gateway a
 * helper started is checked against the OpenAPI document (helpers/openapi.ts).
 */
import { checkedFetch } from "./helpers/openapi.ts";

globalThis.fetch = checkedFetch(globalThis.fetch);
