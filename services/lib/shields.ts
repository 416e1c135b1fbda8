/**
 * Shields: what a site (its manifest's `shields`) and the installation
 * (REFERRER_BLOCKLIST) keep out of the analytics. Pure matching, shared by
 * the manifest's validation (which ranges and patterns are well formed) and
 * ingest-service (which page views and events are dropped, and why).
 */
import ipaddr from "ipaddr.js";

/** Why a page view or event was dropped, as `admin stats dropped` counts it. */
export const DROP_REASONS = ["ip", "country", "page", "referrer"] as const;
export type DropReason = typeof DROP_REASONS[number];

/** A site's shields as the manifest gives them (and export-site prints them). */
export interface ShieldsDef {
  /** IPv4 or IPv6 addresses or CIDR ranges. */
  ips: string[];
  /** ISO 3166-1 alpha-2 codes, uppercase. */
  countries: string[];
  /** Paths where `*` matches any run of characters. */
  pages: string[];
}

export const NO_SHIELDS: ShieldsDef = { ips: [], countries: [], pages: [] };

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An address as compared: IPv4-mapped IPv6 (::ffff:1.2.3.4) is the IPv4 address. */
function address(text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  const bare = text.trim().replace(/^\[|\]$/g, "");
  if (!ipaddr.isValid(bare)) return undefined;
  // Only the four-part dotted form counts as IPv4 ("10.1" is not an address here).
  if (bare.includes(".") && !bare.includes(":") && !ipaddr.IPv4.isValidFourPartDecimal(bare)) {
    return undefined;
  }
  return ipaddr.process(bare);
}

/** An address or CIDR range as a range (an address is its own /32 or /128), or undefined. */
export function ipRange(text: string): Range | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) {
    const one = address(text);
    return one && [one, one.kind() === "ipv4" ? 32 : 128];
  }
  const base = address(text.slice(0, slash));
  const bitsText = text.slice(slash + 1);
  if (!base || !/^\d{1,3}$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  if (bits > (base.kind() === "ipv4" ? 32 : 128)) return undefined;
  return [base, bits];
}

/** A page pattern as a whole-path regular expression: `*` is any run of characters. */
export function pagePattern(pattern: string): RegExp {
  const parts = pattern.split("*").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${parts.join(".*")}$`, "s");
}

/** A referrer host name of the block list, lowercase and without a trailing dot. */
function hostName(value: string): string {
  return value.trim().toLowerCase().replace(/\.$/, "");
}

/**
 * The host names of a REFERRER_BLOCKLIST file: one a line, `#` starts a
 * comment, blank lines ignored. A line that is not a host name is refused
 * with its number, so a typo is seen at start rather than silently ignored.
 */
export function parseReferrerBlocklist(text: string): string[] {
  const hosts: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const name = hostName(line.replace(/#.*$/, ""));
    if (name === "") return;
    if (
      !/^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,62})(?:\.[a-z0-9_](?:[a-z0-9_-]{0,62}))*$/.test(name)
    ) {
      throw new Error(`line ${i + 1}: "${line.trim()}" is not a host name`);
    }
    hosts.push(name);
  });
  return hosts;
}

/** Whether `host` is one of `names` or a subdomain of one. */
export function hostListed(host: string, names: ReadonlySet<string>): boolean {
  let h = hostName(host);
  for (;;) {
    if (names.has(h)) return true;
    const dot = h.indexOf(".");
    if (dot < 0) return false;
    h = h.slice(dot + 1);
  }
}

/** The host of a referrer URL, or undefined when it has none. */
export function referrerHost(referrer: string | null | undefined): string | undefined {
  if (!referrer) return undefined;
  try {
    const host = new URL(referrer).hostname;
    return host === "" ? undefined : host;
  } catch {
    return undefined;
  }
}

/** What one page view or event is judged on. */
export interface ShieldInput {
  clientIp: string;
  /** Looked up only when the site shields countries. */
  country: () => string | null;
  /** The page's path (without query), when the item names a page. */
  path: string | undefined;
  /** The referrer's host, when the item has one. */
  referrerHost: string | undefined;
}

/** A site's shields and the block list, ready to judge items. */
export interface Shield {
  /** Why the item is dropped, or undefined when it is kept. */
  reason(input: ShieldInput): DropReason | undefined;
  /** Whether the site has shields of its own (else only the block list applies). */
  readonly empty: boolean;
}

export function compileShield(def: ShieldsDef, blocklist: ReadonlySet<string>): Shield {
  const ranges = def.ips.map(ipRange).filter((r): r is Range => r !== undefined);
  const countries = new Set(def.countries.map((c) => c.toUpperCase()));
  const pages = def.pages.map(pagePattern);
  const inRanges = (ip: string) => {
    if (ranges.length === 0) return false;
    const parsed = address(ip);
    return parsed !== undefined &&
      ranges.some(([base, bits]) => base.kind() === parsed.kind() && parsed.match(base, bits));
  };
  return {
    empty: ranges.length === 0 && countries.size === 0 && pages.length === 0,
    reason(input) {
      if (inRanges(input.clientIp)) return "ip";
      if (countries.size > 0) {
        const country = input.country();
        if (country !== null && countries.has(country.toUpperCase())) return "country";
      }
      if (input.path !== undefined && pages.some((p) => p.test(input.path!))) return "page";
      if (
        blocklist.size > 0 && input.referrerHost !== undefined &&
        hostListed(input.referrerHost, blocklist)
      ) {
        return "referrer";
      }
      return undefined;
    },
  };
}
