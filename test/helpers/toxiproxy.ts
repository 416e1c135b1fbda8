/**
 * Toxiproxy (built by .ci/tools.sh): a real TCP proxy between the system's
 * processes and Postgres, Redis or a service, driven through its HTTP API,
 * to cut, slow or slice the connection while the system runs.
 */
import { freePort } from "./ports.ts";
import { tool } from "./tools.ts";

export const TOXIPROXY = tool("toxiproxy-server");

export interface Proxy {
  /** host:port the system connects to instead of the upstream. */
  listen: string;
  /** Stops accepting and closes every connection (the upstream is "down"). */
  disable(): Promise<void>;
  enable(): Promise<void>;
  /** Adds a toxic, e.g. ("latency", { latency: 500 }); returns its name. */
  toxic(
    type: string,
    attributes: Record<string, number>,
    stream?: "upstream" | "downstream",
  ): Promise<string>;
  removeToxic(name: string): Promise<void>;
}

export interface Toxiproxy {
  proxy(name: string, upstream: string): Promise<Proxy>;
  stop(): Promise<void>;
}

export async function startToxiproxy(): Promise<Toxiproxy> {
  if (!TOXIPROXY) throw new Error("toxiproxy-server is not installed: run .ci/tools.sh");
  const port = freePort();
  const child = new Deno.Command(TOXIPROXY, {
    args: ["-host", "127.0.0.1", "-port", String(port)],
    stdout: "null",
    stderr: "null",
  }).spawn();
  const api = `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${api}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await answer.text();
    if (!answer.ok) throw new Error(`toxiproxy ${method} ${path}: ${answer.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  const deadline = Date.now() + 10_000;
  while (true) {
    try {
      await call("GET", "/version");
      break;
    } catch (error) {
      if (Date.now() > deadline) {
        child.kill("SIGKILL");
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    async proxy(name, upstream) {
      const listen = `127.0.0.1:${freePort()}`;
      await call("POST", "/proxies", { name, listen, upstream, enabled: true });
      let toxics = 0;
      return {
        listen,
        disable: () => call("POST", `/proxies/${name}`, { enabled: false }),
        enable: () => call("POST", `/proxies/${name}`, { enabled: true }),
        async toxic(type, attributes, stream = "downstream") {
          const toxicName = `${type}_${++toxics}`;
          await call("POST", `/proxies/${name}/toxics`, {
            name: toxicName,
            type,
            stream,
            attributes,
          });
          return toxicName;
        },
        removeToxic: (toxicName) => call("DELETE", `/proxies/${name}/toxics/${toxicName}`),
      };
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    },
  };
}
