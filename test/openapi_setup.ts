/**
 * Setup of the integration and system tests: every answer of a gateway a
 * helper started is checked against the OpenAPI document (helpers/openapi.ts).
 * It runs before each file, and a worker may run many in one module graph.
 */
import { checkFetchOfGateways } from "./helpers/openapi.ts";

checkFetchOfGateways();
