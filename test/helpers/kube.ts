/**
 * A real Kubernetes control plane for the chart tests: etcd (Debian's),
 * kube-apiserver, kube-controller-manager and kube-scheduler (built from the
 * Go module proxy by .ci/tools.sh), and kwok standing in for two nodes, so
 * Deployments get pods, pods get ready and Jobs complete without a kubelet.
 * Everything lives in a temporary folder and on ports chosen here.
 */
import { freePort } from "./ports.ts";
import { runCommand } from "./process.ts";
import { tool } from "./tools.ts";

export const KUBE_TOOLS = [
  "etcd",
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kubectl",
  "kwok",
];

export interface ControlPlane {
  /** A kubeconfig with an admin token (system:masters). */
  kubeconfig: string;
  /** Runs kubectl against the control plane; resolves with stdout, throws on failure. */
  kubectl(args: string[], input?: string): Promise<string>;
  stop(): Promise<void>;
}

const FIXTURES = new URL("../fixtures/kwok/", import.meta.url).pathname;
/** When set, every control-plane process's whole stderr is written there (for a failing run). */
const LOG_DIR = Deno.env.get("CRM_KUBE_LOG_DIR");

async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function node(name: string, zone: string) {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name,
      annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
      labels: {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "topology.kubernetes.io/zone": zone,
        type: "kwok",
      },
    },
    status: {
      allocatable: { cpu: "16", memory: "64Gi", pods: "110" },
      capacity: { cpu: "16", memory: "64Gi", pods: "110" },
    },
  };
}

export async function startControlPlane(): Promise<ControlPlane> {
  const bin = Object.fromEntries(KUBE_TOOLS.map((name) => [name, tool(name)!]));
  const dir = await Deno.makeTempDir({ prefix: "crm-kube-" });
  const processes: Deno.ChildProcess[] = [];
  const logs: Record<string, string> = {};
  const spawn = (name: string, args: string[]) => {
    const child = new Deno.Command(bin[name], { args, stdout: "null", stderr: "piped" }).spawn();
    logs[name] = "";
    (async () => {
      for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
        logs[name] = (logs[name] + chunk).slice(-3000);
        if (LOG_DIR) await Deno.writeTextFile(`${LOG_DIR}/${name}.log`, chunk, { append: true });
      }
    })().catch(() => {});
    processes.push(child);
  };
  const stop = async () => {
    for (const child of processes.reverse()) {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };

  try {
    const [etcdClient, etcdPeer, apiPort] = [freePort(), freePort(), freePort()];
    spawn("etcd", [
      "--data-dir",
      `${dir}/etcd`,
      "--listen-client-urls",
      `http://127.0.0.1:${etcdClient}`,
      "--advertise-client-urls",
      `http://127.0.0.1:${etcdClient}`,
      "--listen-peer-urls",
      `http://127.0.0.1:${etcdPeer}`,
      "--initial-advertise-peer-urls",
      `http://127.0.0.1:${etcdPeer}`,
      "--initial-cluster",
      `default=http://127.0.0.1:${etcdPeer}`,
      "--log-level",
      "error",
    ]);
    const key = await runCommand("openssl", ["genrsa", "-out", `${dir}/sa.key`, "2048"]);
    if (key.code !== 0) throw new Error(`openssl: ${key.stderr}`);
    await runCommand("openssl", [
      "rsa",
      "-in",
      `${dir}/sa.key`,
      "-pubout",
      "-out",
      `${dir}/sa.pub`,
    ]);
    const token = crypto.randomUUID();
    await Deno.writeTextFile(`${dir}/tokens.csv`, `${token},admin,admin,system:masters\n`);
    spawn("kube-apiserver", [
      `--etcd-servers=http://127.0.0.1:${etcdClient}`,
      `--secure-port=${apiPort}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      "--endpoint-reconciler-type=none",
      `--cert-dir=${dir}/certs`,
      `--token-auth-file=${dir}/tokens.csv`,
      "--authorization-mode=RBAC",
      "--service-account-issuer=https://kubernetes.default.svc",
      `--service-account-key-file=${dir}/sa.pub`,
      `--service-account-signing-key-file=${dir}/sa.key`,
      "--service-cluster-ip-range=10.96.0.0/16",
      // One client, no real load: no request throttling (as kwokctl sets it up).
      "--max-requests-inflight=0",
      "--max-mutating-requests-inflight=0",
      "--enable-priority-and-fairness=false",
      // Debian's etcd 3.4.23 lacks RequestWatchProgress, which streaming lists
      // (WatchList) need: kwok's client-go asked for them, every watch ended at
      // once, and kwok saw pods only at its next relist, tens of seconds late
      // (an upgrade's rollout took minutes). Refused here, clients list and
      // then watch: install and upgrade take seconds.
      "--feature-gates=WatchList=false",
    ]);
    const kubeconfig = `${dir}/kubeconfig`;
    await Deno.writeTextFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "local",
          cluster: { server: `https://127.0.0.1:${apiPort}`, "insecure-skip-tls-verify": true },
        }],
        users: [{ name: "admin", user: { token } }],
        contexts: [{ name: "local", context: { cluster: "local", user: "admin" } }],
        "current-context": "local",
      }),
    );
    const kubectl = async (args: string[], input?: string) => {
      const out = await runCommand(bin.kubectl, ["--kubeconfig", kubeconfig, ...args], { input });
      if (out.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${out.stderr}`);
      return out.stdout;
    };
    await waitFor(
      async () => (await kubectl(["get", "--raw", "/readyz"])).trim() === "ok",
      "kube-apiserver",
    );
    spawn("kube-controller-manager", [
      `--kubeconfig=${kubeconfig}`,
      `--service-account-private-key-file=${dir}/sa.key`,
      `--root-ca-file=${dir}/certs/apiserver.crt`,
      "--use-service-account-credentials=false",
      "--leader-elect=false",
      "--kube-api-qps=5000",
      "--kube-api-burst=10000",
      "--controllers=*",
      `--secure-port=${freePort()}`,
    ]);
    spawn("kube-scheduler", [
      `--kubeconfig=${kubeconfig}`,
      "--leader-elect=false",
      "--kube-api-qps=5000",
      "--kube-api-burst=10000",
      `--secure-port=${freePort()}`,
    ]);
    spawn("kwok", [
      `--kubeconfig=${kubeconfig}`,
      "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
      `--config=${FIXTURES}stages.yaml`,
      "--node-ip=127.0.0.1",
      // Leases keep the fake nodes Ready: without them the node controller
      // marks them NotReady after 40 s and evicts their pods.
      "--node-lease-duration-seconds=40",
      `--node-port=${freePort()}`,
      `--server-address=127.0.0.1:${freePort()}`,
    ]);
    for (const [name, zone] of [["kwok-node-a", "zone-a"], ["kwok-node-b", "zone-b"]]) {
      await kubectl(["apply", "-f", "-"], JSON.stringify(node(name, zone)));
    }
    await waitFor(async () => {
      const nodes = JSON.parse(await kubectl(["get", "nodes", "-o", "json"])).items;
      return nodes.length === 2 &&
        nodes.every((n: { status: { conditions?: { type: string; status: string }[] } }) =>
          n.status.conditions?.some((c) => c.type === "Ready" && c.status === "True")
        );
    }, "two ready kwok nodes");
    // The controller-manager makes the default ServiceAccount a namespace needs for pods.
    await waitFor(async () => {
      await kubectl(["get", "serviceaccount", "default", "-n", "default"]);
      return true;
    }, "the default ServiceAccount");
    return { kubeconfig, kubectl, stop };
  } catch (error) {
    const tail = Object.entries(logs).map(([name, log]) => `--- ${name}\n${log.slice(-800)}`).join(
      "\n",
    );
    await stop();
    throw new Error(`${(error as Error).message}\n${tail}`);
  }
}
