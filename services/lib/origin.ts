import { canonicalHost, HOST_NAME } from "./formats.ts";

/**
 * The host a browser route compares with the site's domains: from an Origin
 * header such as "https://www.demo.example:8443", the host without port and
 * without a leading "www." ("demo.example"). Undefined for "null", opaque or
 * malformed origins.
 */
export function hostOfOrigin(origin: string): string | undefined {
  if (!origin || origin === "null") return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const canonical = canonicalHost(host);
  if (!HOST_NAME.test(canonical) && !/^[0-9a-f:.]+$/i.test(canonical)) return undefined;
  return canonical;
}
