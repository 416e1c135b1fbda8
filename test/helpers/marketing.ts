/** Requests to the marketing routes, and reading stored rows back, for the integration tests. */
import type { TestSystem } from "./system.ts";
import { readFixture } from "./system.ts";
import { exportPages } from "../../services/cli/analytics_commands.ts";

// deno-lint-ignore no-explicit-any
export type Json = Record<string, any>;

export const SECRET_KEY = "sk_0123456789abcdef0123456789abcdef0123456789abcdef";
export const CHROME =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";

/** The contract's example site with more event types to test against. */
export async function analyticsManifest(): Promise<Json> {
  const manifest = await readFixture("contract-example.json") as Json;
  manifest.eventTypes = [
    ...manifest.eventTypes,
    {
      name: "note",
      title: "Note",
      params: [
        { key: "text", type: "string" },
        { key: "n", type: "number" },
        { key: "ok", type: "boolean" },
      ],
      bringsRevenue: false,
      currency: null,
    },
    { name: "old_type", title: "Old", status: "archived", params: [] },
  ];
  return manifest;
}

export function postEvent(
  sys: TestSystem,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${sys.url}/marketing/event`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-event-key": SECRET_KEY, ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** A browser beacon: text/plain, the page's Origin. */
export function beacon(
  sys: TestSystem,
  path: "/marketing/view" | "/marketing/act" | "/marketing/lead",
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${sys.url}${path}`, {
    method: "POST",
    headers: {
      "content-type": "text/plain;charset=UTF-8",
      "origin": "https://demo.example",
      "user-agent": CHROME,
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export async function exported(
  sys: TestSystem,
  what: "events" | "pageviews" | "leads",
  siteId = "demo",
  sinceMs?: bigint,
): Promise<Json[]> {
  const rows: Json[] = [];
  for await (const page of exportPages(sys.system.admin, { what, siteId, sinceMs })) {
    rows.push(...page.map((r) => JSON.parse(r)));
  }
  return rows;
}
