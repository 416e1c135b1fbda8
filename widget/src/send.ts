/// <reference lib="dom" />
/**
 * Fire and forget: a beacon with a text/plain body (no CORS preflight), or a
 * keepalive fetch where beacons are missing or refused. Never throws.
 */
export function send(url: string, body: unknown): void {
  try {
    const data = JSON.stringify(body);
    const type = "text/plain;charset=UTF-8";
    if (!navigator.sendBeacon?.(url, new Blob([data], { type }))) {
      fetch(url, {
        method: "POST",
        body: data,
        keepalive: true,
        credentials: "omit",
        headers: { "content-type": type },
      })
        .catch(() => {});
    }
  } catch { /* analytics must never break the page */ }
}
