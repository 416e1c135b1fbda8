/**
 * A Redis server of the test's own on a free loopback port, so a test can
 * kill it mid-run and start it again. Needs the redis-server binary (in
 * Debian's redis-server package; CI installs it).
 */
import { REDIS_URL } from "./env.ts";
import { freePort } from "./ports.ts";

export interface OwnRedis {
  url: string;
  port: number;
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Freezes the process (SIGSTOP): connections stay open, nothing answers. */
  pause(): void;
  /** Lets a paused server run again (SIGCONT). */
  resume(): void;
  close(): Promise<void>;
}

export async function redisServerInstalled(): Promise<boolean> {
  try {
    const { success } = await new Deno.Command("redis-server", { args: ["--version"] }).output();
    return success;
  } catch {
    return false;
  }
}

/**
 * Whether the Redis failure tests run: always where redis-server is
 * installed; and where REDIS_URL is set the environment promises Redis, so a
 * missing binary is a failure there rather than a skip.
 */
export async function ownRedisWanted(): Promise<boolean> {
  if (await redisServerInstalled()) return true;
  if (REDIS_URL) throw new Error("REDIS_URL is set but the redis-server binary is not installed");
  return false;
}

async function answersPing(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    try {
      await conn.write(new TextEncoder().encode("PING\r\n"));
      const buffer = new Uint8Array(16);
      const n = await conn.read(buffer);
      return new TextDecoder().decode(buffer.subarray(0, n ?? 0)).startsWith("+PONG");
    } finally {
      conn.close();
    }
  } catch {
    return false;
  }
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = freePort();
  let child: Deno.ChildProcess | undefined;
  const spawn = async () => {
    child = new Deno.Command("redis-server", {
      args: ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
      stdout: "null",
      stderr: "null",
    }).spawn();
    for (let i = 0; i < 100; i++) {
      if (await answersPing(port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server did not start on port ${port}`);
  };
  const kill = async () => {
    if (!child) return;
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    child = undefined;
  };
  await spawn();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    restart: spawn,
    pause: () => child?.kill("SIGSTOP"),
    resume: () => child?.kill("SIGCONT"),
    close: kill,
  };
}
