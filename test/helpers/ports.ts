/** Above the well-known services' ports (Postgres, Redis, MariaDB, brokers). */
const FIRST_PORT = 10_000;
/** Ports this process has handed out, never handed out twice. */
const given = new Set<number>();
/** The first port of the kernel's ephemeral range (read once), or undefined. */
const EPHEMERAL_LOW = ephemeralLow();

/**
 * A free loopback port (released at once, so a child process can take it).
 *
 * Chosen below the kernel's range of ephemeral ports: a port the kernel
 * picked (port 0) comes from that range, where every outgoing connection
 * (to Postgres, Redis, another test's server) also takes its local port, so
 * between this check and the child's listen one of them could take it (a
 * fault test's ingest-service once failed with EADDRINUSE that way). Below
 * the range only a listener can, and each candidate is checked by binding
 * it. Where the range cannot be read, the kernel's pick.
 */
export function freePort(): number {
  if (EPHEMERAL_LOW !== undefined && EPHEMERAL_LOW > FIRST_PORT + 1000) {
    for (let tries = 0; tries < 100; tries++) {
      const port = FIRST_PORT + Math.floor(Math.random() * (EPHEMERAL_LOW - FIRST_PORT));
      if (given.has(port)) continue;
      try {
        Deno.listen({ hostname: "127.0.0.1", port }).close();
      } catch {
        continue; // taken: another candidate
      }
      given.add(port);
      return port;
    }
  }
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The first port of Linux's ephemeral range, or undefined where it cannot be read. */
function ephemeralLow(): number | undefined {
  try {
    const [low] = Deno.readTextFileSync("/proc/sys/net/ipv4/ip_local_port_range").trim().split(
      /\s+/,
    );
    const n = Number(low);
    return Number.isInteger(n) ? n : undefined;
  } catch {
    return undefined;
  }
}
