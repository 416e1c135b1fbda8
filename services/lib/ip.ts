/**
 * Client IP addresses: which address a request came from (the gateway), and
 * the stored form of it (ingest-service). An IPv4 address loses its last
 * number (set to 0) and an IPv6 address is cut to its /48 network before
 * storage; the location is looked up from the full address first (see
 * ingest/geo.ts), and only the truncated form is ever written.
 */
import { boundedMemo } from "./memo.ts";

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The four numbers of an IPv4 address, or undefined when it is not one. */
function ipv4Parts(ip: string): number[] | undefined {
  const match = IPV4.exec(ip);
  if (!match) return undefined;
  const parts = match.slice(1).map(Number);
  return parts.every((n) => n <= 255) ? parts : undefined;
}

/**
 * The client IP: the socket's address, or with TRUST_PROXY=n the entry n
 * places from the right of X-Forwarded-For (each trusted proxy appends the
 * address it saw). Entries further left are written by the client and are
 * never trusted.
 */
export function clientIp(
  socketIp: string,
  forwardedFor: string | null,
  trustProxy: number,
): string {
  const socket = normalizedSocketIp(socketIp);
  if (trustProxy <= 0 || !forwardedFor) return socket;
  const entries = forwardedFor.split(",").map((e) => e.trim()).filter((e) => e !== "");
  if (entries.length === 0) return socket;
  const candidate = entries[Math.max(0, entries.length - trustProxy)];
  return looksLikeIp(candidate) ? normalizeIp(candidate) : socket;
}

/** Socket addresses repeat (keep-alive clients, a few proxies): their normal form is remembered. */
const normalizedSocketIp = boundedMemo((ip) => normalizeIp(ip), {
  maxEntries: 10_000,
  maxInputLength: 64,
});

/** An IPv4 address, or text made of the characters of an IPv6 one. */
function looksLikeIp(value: string): boolean {
  if (IPV4.test(value)) return ipv4Parts(value) !== undefined;
  return /^[0-9a-fA-F:.]+$/.test(value) && value.includes(":");
}

/** Lowercase IPv6, and IPv4-mapped IPv6 (::ffff:1.2.3.4) as plain IPv4. */
export function normalizeIp(ip: string): string {
  const lower = ip.toLowerCase().replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  return mapped ? mapped[1] : lower;
}

/** The eight 16-bit groups of an IPv6 address, or undefined when it is not one. */
export function ipv6Groups(ip: string): number[] | undefined {
  let text = ip.toLowerCase().replace(/^\[|\]$/g, "");
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  if (!/^[0-9a-f:.]+$/.test(text) || !text.includes(":")) return undefined;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const tail = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (tail) {
    const v4 = ipv4Parts(tail[1]);
    if (!v4) return undefined;
    const hex = `${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
    text = text.slice(0, -tail[1].length) + hex;
  }
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const parse = (part: string) => (part === "" ? [] : part.split(":"));
  const head = parse(halves[0]);
  const rest = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (all.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return undefined;
  return all.map((g) => parseInt(g, 16));
}

/** The stored form of a client IP, or null when the text is not an IP address. */
export function truncateIp(ip: string): string | null {
  const v4 = ipv4Parts(ip);
  if (v4) return `${v4[0]}.${v4[1]}.${v4[2]}.0`;
  const groups = ipv6Groups(ip);
  if (!groups) return null;
  // IPv4-mapped addresses are IPv4 clients.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.0`;
  }
  const network = groups.slice(0, 3);
  while (network.length && network[network.length - 1] === 0) network.pop();
  return `${network.map((g) => g.toString(16)).join(":")}::`;
}

/**
 * True when a listen address is reachable from this machine only: a
 * 127.0.0.0/8 address, ::1 (also as ::ffff:127.x) or "localhost".
 */
export function isLoopbackHost(host: string): boolean {
  const h = normalizeIp(host.trim());
  if (h === "localhost") return true;
  if (IPV4.test(h)) return ipv4Parts(h)?.[0] === 127;
  const groups = ipv6Groups(h);
  return groups !== undefined && groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1;
}
