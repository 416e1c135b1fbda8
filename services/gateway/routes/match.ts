/**
 * A tiny path matcher: literal segments, ":name" parameters and a last "*"
 * (any rest of the path, none included); one trailing slash tolerated.
 */

export interface RouteMatch<T> {
  route: Route<T>;
  params: Record<string, string>;
}

export interface Route<T> {
  pattern: string;
  segments: string[];
  target: T;
}

export function route<T>(pattern: string, target: T): Route<T> {
  return { pattern, segments: pattern.split("/").filter((s) => s !== ""), target };
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // a malformed escape fails every identifier format, so it is refused like one
  }
}

export function matchRoute<T>(
  routes: readonly Route<T>[],
  pathname: string,
): RouteMatch<T> | undefined {
  const trimmed = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
  const parts = trimmed.split("/").slice(1);
  for (const r of routes) {
    const rest = r.segments.at(-1) === "*";
    if (rest ? parts.length < r.segments.length - 1 : r.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    const fixed = rest ? r.segments.length - 1 : parts.length;
    for (let i = 0; i < fixed && ok; i++) {
      const expected = r.segments[i];
      if (expected.startsWith(":")) {
        if (parts[i] === "") ok = false;
        else params[expected.slice(1)] = decode(parts[i]);
      } else if (expected !== parts[i]) {
        ok = false;
      }
    }
    if (ok) return { route: r, params };
  }
  return undefined;
}
