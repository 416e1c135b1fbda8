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
  const socket = normalizeIp(socketIp);
  if (trustProxy <= 0 || !forwardedFor) return socket;
  const entries = forwardedFor.split(",").map((e) => e.trim()).filter((e) => e !== "");
  if (entries.length === 0) return socket;
  const candidate = entries[Math.max(0, entries.length - trustProxy)];
  return isIp(candidate) ? normalizeIp(candidate) : socket;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function isIp(value: string): boolean {
  const v4 = IPV4.exec(value);
  if (v4) return v4.slice(1).every((n) => Number(n) <= 255);
  return /^[0-9a-fA-F:.]+$/.test(value) && value.includes(":");
}

/** Lowercase IPv6, and IPv4-mapped IPv6 (::ffff:1.2.3.4) as plain IPv4. */
export function normalizeIp(ip: string): string {
  const lower = ip.toLowerCase().replace(/^\[|\]$/g, "");
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  return mapped ? mapped[1] : lower;
}
