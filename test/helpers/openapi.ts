/**
 * Every answer a test sees from a gateway, checked against the OpenAPI
 * document the gateway serves (services/gateway/openapi/document.ts): the
 * path and method are documented, the status is listed, the documented
 * headers are there and match their schemas, the body's media type is a
 * documented one, and a JSON body matches its JSON Schema (Ajv, draft
 * 2020-12, the dialect of OpenAPI 3.1).
 *
 * test/openapi_setup.ts wraps the global fetch of the integration and system
 * tests once per worker (checkFetchOfGateways), so every answer of a gateway
 * that a helper started and has not stopped (registerGateway) is checked, and
 * a mismatch fails the test that made the request.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { OPENAPI_DOCUMENT } from "../../services/gateway/openapi/document.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

// ajv-formats is CommonJS: its function is the default export, or that export's own default.
// deno-lint-ignore no-explicit-any
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

const DOCUMENT_ID = "https://crm.invalid/openapi.json";
const METHODS = new Set(["get", "head", "post", "put", "patch", "delete", "options", "trace"]);

interface Template {
  path: string;
  pattern: RegExp;
}

/** A JSON pointer into the document, as a URI fragment. */
function pointer(segments: readonly string[]): string {
  return "#/" + segments
    .map((s) => encodeURIComponent(s.replaceAll("~", "~0").replaceAll("/", "~1")))
    .join("/");
}

export interface AnswerSeen {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  /** The body as received (decoded); empty when there is none. */
  body: string;
}

export class OpenApiValidator {
  readonly document: Json;
  #ajv: Ajv2020;
  #templates: Template[];
  #compiled = new Map<string, ValidateFunction>();

  constructor(document: Json = OPENAPI_DOCUMENT) {
    this.document = structuredClone(document);
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.#ajv);
    this.#ajv.addSchema({ ...this.document, $id: DOCUMENT_ID });
    this.#templates = Object.keys(this.document.paths).map((path) => ({
      path,
      pattern: new RegExp(
        "^" + path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+") + "$",
      ),
    }));
  }

  /** The documented path a request path falls under (one trailing slash tolerated), if any. */
  pathOf(pathname: string): string | undefined {
    const exact = this.#templates.find((t) => t.path === pathname);
    if (exact) return exact.path;
    const trimmed = pathname.length > 1 && pathname.endsWith("/")
      ? pathname.slice(0, -1)
      : pathname;
    return this.#templates.find((t) => t.pattern.test(trimmed))?.path;
  }

  /** Follows a `$ref` of the document (components), or gives the object itself. */
  resolve(object: Json): Json {
    let current = object;
    while (current && typeof current.$ref === "string") {
      const parts = current.$ref.replace(/^#\//, "").split("/").map((p: string) =>
        decodeURIComponent(p).replaceAll("~1", "/").replaceAll("~0", "~")
      );
      current = parts.reduce((node: Json, key: string) => node?.[key], this.document);
    }
    return current;
  }

  #validator(segments: string[]): ValidateFunction {
    const key = segments.join("\u0000");
    let validate = this.#compiled.get(key);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: DOCUMENT_ID + pointer(segments) });
      this.#compiled.set(key, validate);
    }
    return validate;
  }

  #errors(validate: ValidateFunction): string {
    return this.#ajv.errorsText(validate.errors, { separator: "; ", dataVar: "body" });
  }

  /**
   * A path that names no route answers 404 (or a refusal made before
   * routing) with the error body the document describes; the exceptions are
   * the content API's CORS preflight (answered for /content and any path under it)
   * and the demo site's page of `deno task start`, a development aid the
   * document leaves out.
   */
  #checkUnrouted(method: string, url: URL, answer: AnswerSeen): string[] {
    const where = `${method.toUpperCase()} ${url.pathname} ${answer.status}`;
    if (url.pathname === "/demo" || url.pathname.startsWith("/demo/")) return [];
    const underContent = url.pathname === "/content" || url.pathname.startsWith("/content/");
    if (method === "options" && underContent && answer.status === 204) {
      return [];
    }
    // A request the gateway refuses before routing (its URL or head too long, its
    // body too large) is refused alike on any path.
    if (![404, 413, 414, 431].includes(answer.status)) {
      return [`${where}: an undocumented path answered other than 404, 413, 414 or 431`];
    }
    if (method === "head") return [];
    const validate = this.#validator(["components", "schemas", "Error"]);
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [`${where}: the unknown-route 404 is not JSON`];
    }
    if (!validate(body)) return [`${where}: ${this.#errors(validate)}`];
    return [];
  }

  /** What in value breaks the document's schema `name` (components.schemas): empty when none. */
  checkSchema(name: string, value: unknown): string[] {
    const validate = this.#validator(["components", "schemas", name]);
    return validate(value) ? [] : [`${name}: ${this.#errors(validate)}`];
  }

  /** What in an answer differs from the document: empty when it matches. */
  check(answer: AnswerSeen): string[] {
    const url = new URL(answer.url);
    const method = answer.method.toLowerCase();
    // Deno's HTTP server refuses a head beyond its own parser's bounds (128
    // fields, 64 KiB) with a bare 400 before the gateway sees the request:
    // no answer of the gateway's, so none the document describes.
    if (answer.status === 400 && answer.body === "" && !answer.headers.has("x-request-id")) {
      return [];
    }
    const path = this.pathOf(url.pathname);
    if (!path) return this.#checkUnrouted(method, url, answer);
    const item = this.document.paths[path];
    // A trailing slash matches a route only where the gateway's router allows one; elsewhere
    // (the probes, the assets) the path names no route at all.
    const bySlash = path !== url.pathname &&
      !this.#templates.some((t) => t.pattern.test(url.pathname));
    if (bySlash && answer.status === 404 && !item[method]?.responses?.["404"]) {
      return this.#checkUnrouted(method, url, answer);
    }
    if (!METHODS.has(method) || !item[method]) {
      return [`${method.toUpperCase()} ${path} is not documented`];
    }
    const where = `${method.toUpperCase()} ${url.pathname} ${answer.status}`;
    const responses = item[method].responses;
    const status = String(answer.status);
    const responseKey = status in responses
      ? status
      : `${status[0]}XX` in responses
      ? `${status[0]}XX`
      : "default" in responses
      ? "default"
      : undefined;
    if (!responseKey) {
      return [`${where}: status not listed (${Object.keys(responses).join(", ")})`];
    }
    const problems: string[] = [];
    const documented = this.resolve(responses[responseKey]);
    const reference: string | undefined = responses[responseKey].$ref;
    const responseBase = reference
      ? ["components", "responses", reference.split("/").pop()!]
      : ["paths", path, method, "responses", responseKey];
    for (const [name, declared] of Object.entries<Json>(documented.headers ?? {})) {
      const headerObject = this.resolve(declared);
      const value = answer.headers.get(name);
      if (value === null) {
        if (headerObject.required) problems.push(`${where}: header ${name} missing`);
        continue;
      }
      const headerSegments = declared.$ref
        ? ["components", "headers", declared.$ref.split("/").pop(), "schema"]
        : [...responseBase, "headers", name, "schema"];
      const validate = this.#validator(headerSegments);
      if (!validate(value)) {
        problems.push(
          `${where}: header ${name}: ${JSON.stringify(value)} ${this.#errors(validate)}`,
        );
      }
    }
    const content = documented.content as Record<string, Json> | undefined;
    const hasBody = answer.body.length > 0;
    if (!content) {
      if (hasBody) problems.push(`${where}: a body where none is documented`);
      return problems;
    }
    if (method === "head" || !hasBody) {
      if (method !== "head") problems.push(`${where}: no body where one is documented`);
      return problems;
    }
    const type = (answer.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    if (!(type in content)) {
      problems.push(`${where}: content-type ${type} not documented (${Object.keys(content)})`);
      return problems;
    }
    if (type !== "application/json") return problems;
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      problems.push(`${where}: the body is not JSON: ${answer.body.slice(0, 200)}`);
      return problems;
    }
    const validate = this.#validator([...responseBase, "content", type, "schema"]);
    if (!validate(body)) {
      problems.push(
        `${where}: ${this.#errors(validate)}; body ${JSON.stringify(body).slice(0, 500)}`,
      );
    }
    return problems;
  }
}

let shared: OpenApiValidator | undefined;
/** One validator per worker (compiling the schemas is the costly part). */
export function openApiValidator(): OpenApiValidator {
  return shared ??= new OpenApiValidator();
}

/** Origins of the gateways the helpers started; their answers are checked. */
const gateways = new Set<string>();

/**
 * Checks every answer from this gateway until the returned function is
 * called, which the helper that started it does when it stops: a worker runs
 * many files, and a later one may get the port for a service that is no
 * gateway.
 */
export function registerGateway(url: string): () => void {
  const origin = new URL(url).origin;
  gateways.add(origin);
  return () => gateways.delete(origin);
}

const CHECKED = Symbol("checked against the OpenAPI document");

/** globalThis.fetch, checked once however many test files of a worker ask for it. */
export function checkFetchOfGateways(): void {
  const current = globalThis.fetch as typeof fetch & { [CHECKED]?: true };
  if (current[CHECKED]) return;
  globalThis.fetch = Object.assign(checkedFetch(current), { [CHECKED]: true as const });
}

export class OpenApiMismatch extends Error {
  constructor(readonly problems: string[]) {
    super(`answer does not match the OpenAPI document:\n  ${problems.join("\n  ")}`);
    this.name = "OpenApiMismatch";
  }
}

/**
 * fetch, with every answer of a registered gateway checked against the
 * document before it is handed back; a mismatch rejects with OpenApiMismatch.
 */
function checkedFetch(inner: typeof fetch): typeof fetch {
  const checked = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const response = await inner(input, init);
    const url = input instanceof Request ? input.url : String(input);
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      return response;
    }
    if (!gateways.has(origin)) return response;
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    let body: string;
    try {
      body = await response.clone().text();
    } catch {
      return response; // the body did not arrive (the test cut it short): nothing to check
    }
    const problems = openApiValidator().check({
      method,
      url,
      status: response.status,
      headers: response.headers,
      body,
    });
    if (problems.length > 0) throw new OpenApiMismatch(problems);
    return response;
  };
  return checked as typeof fetch;
}
