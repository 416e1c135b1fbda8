/**
 * Which addresses a webhook delivery may connect to. Only public unicast
 * addresses pass: loopback, private (RFC 1918), link-local (the cloud
 * metadata endpoints 169.254.169.254 and fd00:ec2::254 among them),
 * unique-local, carrier-grade NAT, unspecified, multicast, broadcast and
 * reserved ranges are refused, and so are the IPv6 forms that embed an IPv4
 * address for a gateway to unwrap (6to4, NAT64, Teredo); an IPv4-mapped
 * address (::ffff:a.b.c.d) is judged as the IPv4 address it is.
 * The ranges are ipaddr.js's, a maintained table of the IANA registries.
 */
import ipaddr from "ipaddr.js";

/** Why the address may not be reached, or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, ""));
  } catch {
    return `${address} is not an IP address`;
  }
  if (parsed instanceof ipaddr.IPv6 && parsed.isIPv4MappedAddress()) {
    parsed = parsed.toIPv4Address();
  }
  const range = parsed.range();
  return range === "unicast" ? undefined : `address ${address} is ${describe(range)}`;
}

const NAMES: Record<string, string> = {
  loopback: "loopback",
  private: "private",
  linkLocal: "link-local",
  uniqueLocal: "unique-local",
  carrierGradeNat: "carrier-grade NAT",
  unspecified: "unspecified",
  multicast: "multicast",
  broadcast: "broadcast",
  reserved: "reserved",
};

function describe(range: string): string {
  return NAMES[range] ?? `not public (${range})`;
}
