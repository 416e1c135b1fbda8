/**
 * The manifest's members for site owners' analytics: `shields` (what is kept
 * out at ingest) and `segments` (named filter sets). Their shape is checked
 * here; a segment's filters are judged by ingest-service against the site's
 * declared event types with the reports query's own rules.
 */
import { ipRange, type ShieldsDef } from "../shields.ts";
import { ManifestError } from "./validate.ts";
import type { SegmentDef } from "./types.ts";
import { isJsonObject } from "../json.ts";
import { MAX_SEGMENT_FILTERS, MAX_SEGMENT_NAME, MAX_SEGMENTS } from "../stats/vocabulary.ts";

/** At most this many of each of `ips`, `countries` and `pages`. */
export const MAX_SHIELDS = 100;
export { MAX_SEGMENT_FILTERS, MAX_SEGMENT_NAME, MAX_SEGMENTS };

function fail(path: string, problem: string): never {
  throw new ManifestError(path, problem);
}

function strings(value: unknown, path: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(path, "must be an array");
  if (value.length > MAX_SHIELDS) fail(path, `must hold at most ${MAX_SHIELDS} entries`);
  return value.map((v, i) => {
    if (typeof v !== "string") fail(`${path}[${i}]`, "must be a string");
    return v;
  });
}

/** `shields`, or undefined when the manifest has none (the site's are then left as they are). */
export function shieldsMember(value: unknown): ShieldsDef | undefined {
  if (value === undefined) return undefined;
  if (!isJsonObject(value)) fail("$.shields", "must be an object");
  const ips = strings(value.ips, "$.shields.ips");
  ips.forEach((ip, i) => {
    if (!ipRange(ip)) {
      fail(`$.shields.ips[${i}]`, "must be an IPv4 or IPv6 address or CIDR range");
    }
  });
  const countries = strings(value.countries, "$.shields.countries").map((c, i) => {
    if (!/^[A-Za-z]{2}$/.test(c)) {
      fail(`$.shields.countries[${i}]`, "must be an ISO 3166-1 alpha-2 country code");
    }
    return c.toUpperCase();
  });
  const pages = strings(value.pages, "$.shields.pages");
  pages.forEach((p, i) => {
    if (!p.startsWith("/") && !p.startsWith("*")) {
      fail(`$.shields.pages[${i}]`, "must be a path starting with / (a * matches any run)");
    }
  });
  return { ips: ips.map((ip) => ip.trim()), countries, pages };
}

/** `segments`: each a name and 1 to 10 filters shaped [operator, dimension, values]. */
export function segmentsMember(value: unknown): SegmentDef[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail("$.segments", "must be an array");
  if (value.length > MAX_SEGMENTS) {
    fail("$.segments", `a site has at most ${MAX_SEGMENTS} segments`);
  }
  const seen = new Set<string>();
  return value.map((item, i) => {
    const path = `$.segments[${i}]`;
    if (!isJsonObject(item)) fail(path, "must be an object");
    const name = item.name;
    if (typeof name !== "string") fail(`${path}.name`, "must be a string");
    const length = [...name.trim()].length;
    if (length < 1 || length > MAX_SEGMENT_NAME) {
      fail(`${path}.name`, `must be 1 to ${MAX_SEGMENT_NAME} characters`);
    }
    if (seen.has(name.trim())) fail(`${path}.name`, `duplicate segment name "${name.trim()}"`);
    seen.add(name.trim());
    const filters = item.filters;
    if (!Array.isArray(filters) || filters.length < 1 || filters.length > MAX_SEGMENT_FILTERS) {
      fail(`${path}.filters`, `must be a list of 1 to ${MAX_SEGMENT_FILTERS} filters`);
    }
    return { name: name.trim(), filters: filters as SegmentDef["filters"] };
  });
}
