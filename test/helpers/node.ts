/**
 * A real Kubernetes node on this machine (deploy/node/up.sh and down.sh) and
 * a bounded load of content reads and server events to drive through it.
 */
import { runCommand, type TaskResult } from "./process.ts";
import { findTool, tool, TOOLS_REQUIRED } from "./tools.ts";

/** What deploy/node/up.sh runs, from .ci/tools.sh (`kube`, `etcd`, `node`, `helm`, `podman`). */
export const NODE_TOOLS = [
  "helm",
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubectl",
  "kubelet",
  "kube-proxy",
  "kube-router",
  "coredns",
  "containerd",
  "ctr",
  "podman",
];

export const NODE_IP = "198.18.255.1";
const IS_ROOT = Deno.uid() === 0;

/**
 * True when the node can run here: every tool present and root. Under
 * CRM_REQUIRE_TOOLS=1 a missing tool or missing root throws instead.
 */
export function canRunNode(): boolean {
  const present = NODE_TOOLS.map((name) => tool(name)).every((path) => path !== undefined);
  if (!IS_ROOT && TOOLS_REQUIRED) {
    throw new Error("the real-node test needs root (containerd, the kubelet, iptables)");
  }
  return present && IS_ROOT;
}

export interface Node {
  dir: string;
  kubeconfig: string;
  /** Where the node's Postgres and Redis listen (reachable from pods and from here). */
  databaseUrl: string;
  redisUrl: string;
  /** up.sh's timings, one line a step. */
  timings: string;
  kubectl(args: string[], input?: string): Promise<string>;
  helm(args: string[]): Promise<TaskResult>;
  /** ctr against the node's containerd, in the kubelet's namespace (k8s.io). */
  ctr(args: string[]): Promise<string>;
  /** Copies an image from podman into the node's containerd, as up.sh does localhost/crm:dev. */
  loadImage(tag: string): Promise<void>;
  /** down.sh: resolves with its result; exit code 0 means nothing of the node is left. */
  down(): Promise<TaskResult>;
}

export async function startNode(dir: string): Promise<Node> {
  const env = { NODE_DIR: dir, PATH: `${Deno.env.get("PATH")}:/usr/sbin:/sbin` };
  const down = () => runCommand("bash", ["deploy/node/down.sh"], { env });
  const up = await runCommand("bash", ["deploy/node/up.sh"], { env });
  if (up.code !== 0) {
    const logs = await runCommand("bash", [
      "-c",
      `for f in ${dir}/logs/*.log; do echo "--- $f"; tail -n 15 "$f"; done`,
    ]);
    const downed = await down();
    throw new Error(`deploy/node/up.sh failed:\n${up.stderr}\n${logs.stdout}\n${downed.stderr}`);
  }
  const settings = Object.fromEntries(
    (await Deno.readTextFile(`${dir}/env`)).trim().split("\n").map((line) => {
      const at = line.indexOf("=");
      return [line.slice(0, at), line.slice(at + 1)];
    }),
  );
  const kubeconfig = `${dir}/kubeconfig`;
  const kubectl = async (args: string[], input?: string) => {
    const out = await runCommand(findTool("kubectl")!, ["--kubeconfig", kubeconfig, ...args], {
      input,
    });
    if (out.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${out.stderr}`);
    return out.stdout;
  };
  const helm = (args: string[]) =>
    runCommand(findTool("helm")!, args, {
      env: { KUBECONFIG: kubeconfig, HELM_CACHE_HOME: `${dir}/helm-cache` },
    });
  const socket = `${dir}/containerd/containerd.sock`;
  const ctr = async (args: string[]) => {
    const out = await runCommand(findTool("ctr")!, ["-a", socket, "-n", "k8s.io", ...args]);
    if (out.code !== 0) throw new Error(`ctr ${args.join(" ")}: ${out.stderr}`);
    return out.stdout;
  };
  const loadImage = async (tag: string) => {
    const out = await runCommand("bash", [
      "-c",
      'set -o pipefail; "$3" save -q "$1" | "$4" -a "$2" -n k8s.io images import - >/dev/null',
      "load",
      tag,
      socket,
      findTool("podman")!,
      findTool("ctr")!,
    ]);
    if (out.code !== 0) throw new Error(`loading ${tag} into the node: ${out.stderr}`);
  };
  return {
    dir,
    kubeconfig,
    databaseUrl: settings.DATABASE_URL,
    redisUrl: settings.REDIS_URL,
    timings: up.stderr,
    kubectl,
    helm,
    ctr,
    loadImage,
    down,
  };
}

/** An error with its cause: fetch's own message ("fetch failed") hides whether it was a reset. */
const describe = (error: unknown) => {
  const cause = (error as { cause?: unknown }).cause;
  return cause ? `${error}: ${cause}` : String(error);
};

/** What a load run saw. */
export interface LoadResult {
  reads: number;
  readFailures: string[];
  /** Event requests sent, retries included. */
  eventRequests: number;
  /** Event ids acknowledged with 200 (each after however many 503s). */
  acked: string[];
  /** 503 answers to events, each retried with the same id. */
  unavailable: number;
  /** From the first 503 to the last, in ms (0 without any). */
  unavailableWindowMs: number;
  /** Event answers other than 200 and 503, and errors after the one retry below. */
  eventFailures: string[];
  /**
   * Requests sent again once because their connection failed before any
   * answer (a read, or an event with its same id), with the cause. A stopping
   * gateway closes its kept-alive connections, and a request a client wrote
   * on one just then is never read: Deno's server cannot end a kept-alive
   * connection after an answer (it ignores a handler's `Connection: close`,
   * denoland/deno#9411), so a client retries once, as browsers, curl and Go's
   * net/http do for idempotent requests on a reused connection.
   */
  connectionRetries: string[];
  /** The load's workers, each a sequential client on a connection of its own. */
  connections: number;
  ms: number;
}

/** fetch, sent once more when the connection failed before an answer (recorded in `retries`). */
async function fetchRetryingConnection(
  url: string,
  init: RequestInit,
  retries: string[],
): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    retries.push(`${new URL(url).pathname}: ${describe(error)}`);
    return await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  }
}

/**
 * Reads a page and sends server events with unique ids through `url` from a
 * few sequential workers, until stopped. A 503 to an event is retried with
 * the same id after 200 ms, as a client honouring the contract does; a
 * connection that fails before an answer is retried once (connectionRetries);
 * any other failure is recorded and not retried.
 */
export function startLoad(
  url: string,
  keys: { site: string; secret: string },
  prefix: string,
  workers = { readers: 3, senders: 2 },
): { stop(): Promise<LoadResult>; acked: readonly string[] } {
  let running = true;
  const started = performance.now();
  const result: LoadResult = {
    reads: 0,
    readFailures: [],
    eventRequests: 0,
    acked: [],
    unavailable: 0,
    unavailableWindowMs: 0,
    eventFailures: [],
    connectionRetries: [],
    connections: workers.readers + workers.senders,
    ms: 0,
  };
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const reader = async () => {
    while (running) {
      result.reads++;
      try {
        const answer = await fetchRetryingConnection(`${url}/content/v1/pages/home`, {
          headers: { "x-crm-key": keys.site },
        }, result.connectionRetries);
        const body = await answer.text();
        if (answer.status !== 200 || JSON.parse(body).marker !== "home") {
          result.readFailures.push(`${answer.status} ${body.slice(0, 120)}`);
        }
      } catch (error) {
        result.readFailures.push(describe(error));
      }
      await pause(20);
    }
  };
  let sequence = 0;
  let firstUnavailable: number | undefined;
  const sender = async () => {
    while (running) {
      const id = `${prefix}-${sequence++}`;
      for (;;) {
        result.eventRequests++;
        try {
          const answer = await fetchRetryingConnection(`${url}/marketing/event`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-event-key": keys.secret },
            body: JSON.stringify({ name: "signup", event_id: id }),
          }, result.connectionRetries);
          const body = await answer.text();
          if (answer.status === 200 && JSON.parse(body).ok === true) {
            result.acked.push(id);
            break;
          }
          if (answer.status === 503) {
            result.unavailable++;
            const at = performance.now();
            firstUnavailable ??= at;
            result.unavailableWindowMs = Math.round(at - firstUnavailable);
            await pause(200);
            continue;
          }
          result.eventFailures.push(`${id}: ${answer.status} ${body.slice(0, 120)}`);
        } catch (error) {
          result.eventFailures.push(`${id}: ${describe(error)}`);
        }
        break;
      }
      await pause(20);
    }
  };
  const all = [
    ...Array.from({ length: workers.readers }, reader),
    ...Array.from({ length: workers.senders }, sender),
  ];
  return {
    /** The ids acknowledged so far (the same array the result holds). */
    acked: result.acked,
    async stop() {
      running = false;
      await Promise.all(all);
      result.ms = Math.round(performance.now() - started);
      return result;
    },
  };
}
