/**
 * Dependency audit of deno.lock, offline. The npm registry's audit endpoint
 * (what `npm audit` asks) is not reachable from this build machine: `npm
 * audit --package-lock-only` against a package-lock generated from the same
 * dependencies got `405 Method Not Allowed` for
 * POST https://registry.npmjs.org/-/npm/v1/security/advisories/bulk. So this
 * check compares every npm package version in deno.lock with a committed list
 * of known-bad versions (.ci/advisories.json: public advisories, and releases
 * known to have been malicious), and fails on any match that the allow-list
 * (.ci/audit-allow.json, each entry with its reason) does not accept. It is
 * only as current as that list: update the list when an advisory concerns a
 * dependency, and run `npm audit` where the endpoint answers.
 *
 * Every entry names the source it was checked against ("source"); an entry
 * without one fails the run, so an unverified entry cannot slip in.
 *
 * Usage: deno run --allow-read .ci/audit.ts   (exit 1 on a finding, a stale allow-list entry or an
 * advisory without a source)
 */

export interface Advisory {
  /** GHSA or CVE id, or a name for a malicious release. */
  id: string;
  package: string;
  /** Affected versions: each a range such as ">=7.0.0 <7.2.5", or an exact version "4.4.2". */
  affected: string[];
  summary: string;
  /** Where the id, package and ranges were checked: a repository and path, or a URL. */
  source: string;
}

export interface Allowed {
  id: string;
  package: string;
  version: string;
  /** Why the version may stay (not reachable, not used in production...), and who decided when. */
  reason: string;
}

export interface Finding {
  advisory: Advisory;
  version: string;
  allowed?: Allowed;
}

/** The npm packages in a deno.lock (format 4 or 5): name and version, peer suffixes dropped. */
export function lockedPackages(lock: { npm?: Record<string, unknown> }): [string, string][] {
  const out: [string, string][] = [];
  for (const key of Object.keys(lock.npm ?? {})) {
    const at = key.indexOf("@", 1);
    if (at < 0) continue;
    out.push([key.slice(0, at), key.slice(at + 1).split("_")[0]]);
  }
  return out;
}

function parts(version: string): number[] {
  const [core, pre] = version.split("-", 2);
  const numbers = core.split(".").map((n) => Number.parseInt(n, 10) || 0);
  while (numbers.length < 3) numbers.push(0);
  // A prerelease sorts before its release: 2.0.0-5 < 2.0.0.
  numbers.push(pre === undefined ? 1 : 0);
  return numbers;
}

export function compareVersions(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/** True when version is in range: space-separated comparators (>=, >, <=, <, =), all must hold. */
export function inRange(version: string, range: string): boolean {
  return range.trim().split(/\s+/).every((comparator) => {
    const match = /^(>=|<=|>|<|=)?(.+)$/.exec(comparator);
    if (!match) return false;
    const order = compareVersions(version, match[2]);
    switch (match[1]) {
      case ">=":
        return order >= 0;
      case ">":
        return order > 0;
      case "<=":
        return order <= 0;
      case "<":
        return order < 0;
      default:
        return order === 0;
    }
  });
}

export function audit(
  packages: [string, string][],
  advisories: Advisory[],
  allowList: Allowed[],
): { findings: Finding[]; stale: Allowed[] } {
  const findings: Finding[] = [];
  for (const [name, version] of packages) {
    for (const advisory of advisories) {
      if (advisory.package !== name) continue;
      if (!advisory.affected.some((range) => inRange(version, range))) continue;
      const allowed = allowList.find((a) =>
        a.id === advisory.id && a.package === name && a.version === version
      );
      findings.push({ advisory, version, allowed });
    }
  }
  const stale = allowList.filter((a) => !findings.some((f) => f.allowed === a));
  return { findings, stale };
}

if (import.meta.main) {
  const root = new URL("..", import.meta.url);
  const read = async (path: string) => JSON.parse(await Deno.readTextFile(new URL(path, root)));
  const packages = lockedPackages(await read("deno.lock"));
  const advisories: Advisory[] = (await read(".ci/advisories.json")).advisories;
  const unsourced = advisories.filter((a) => !a.source?.trim());
  for (const a of unsourced) {
    console.log(`advisory ${a.id} (${a.package}) names no source it was checked against`);
  }
  const allowList: Allowed[] = (await read(".ci/audit-allow.json")).allowed;
  const { findings, stale } = audit(packages, advisories, allowList);
  for (const f of findings) {
    const verdict = f.allowed ? `allowed: ${f.allowed.reason}` : "NOT ALLOWED";
    console.log(
      `${f.advisory.package}@${f.version} ${f.advisory.id} (${f.advisory.summary}): ${verdict}`,
    );
  }
  for (const a of stale) {
    console.log(
      `stale allow-list entry ${a.package}@${a.version} ${a.id}: it matches nothing, remove it`,
    );
  }
  const refused = findings.filter((f) => !f.allowed).length;
  console.log(
    `audit (offline list, ${advisories.length} advisories): ${packages.length} npm packages, ` +
      `${findings.length} findings, ${refused} not allowed, ${stale.length} stale allow-list entries`,
  );
  if (refused > 0 || stale.length > 0 || unsourced.length > 0) Deno.exit(1);
}
