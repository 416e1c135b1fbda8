# Settings shared by deploy/node/up.sh and deploy/node/down.sh: one real
# Kubernetes node on this machine, everything it owns under NODE_DIR.
NODE_DIR=${NODE_DIR:-/tmp/crm-node}
BIN=${CRM_TOOLS_BIN:-$HOME/.cache/crm-tools/bin}
KUBE_VERSION=v1.37.2
# The node's address: an extra address on lo (the kernel here has no dummy
# netdev), since the kubelet refuses a 127.x node IP.
NODE_IP=198.18.255.1
POD_CIDR=198.18.0.0/24
POD_GATEWAY=198.18.0.1
SERVICE_CIDR=198.19.0.0/24
BRIDGE=crmbr0
NODE_NAME=crm-node
# Postgres and Redis of the node's own, on the node address where pods reach
# them; the machine's own servers (on 127.0.0.1) are left untouched.
PG_PORT=25432
REDIS_PORT=26379
# Control plane and node ports, all on 127.0.0.1 except the kubelet's.
ETCD_PORT=22379
ETCD_PEER_PORT=22380
API_PORT=22443
KCM_PORT=22257
SCHEDULER_PORT=22259
KUBELET_PORT=22250
KUBELET_HEALTHZ_PORT=22248
PROXY_HEALTHZ_PORT=22256
PROXY_METRICS_PORT=22249
ROUTER_HEALTH_PORT=22244
# Host sysctls the kubelet and the bridge plugin rewrite; restored on the way down.
SYSCTLS="kernel.panic kernel.panic_on_oops vm.overcommit_memory net.ipv4.ip_forward"
# Paths outside NODE_DIR the kubelet, containerd and the CNI plugins write to
# whatever they are told; removed on the way down when they were not there before.
OUTSIDE_PATHS="/var/lib/kubelet /var/lib/cni /var/log/containers /var/log/pods /var/run/netns /run/containerd /usr/libexec/kubernetes"

SOCK=$NODE_DIR/containerd/containerd.sock
KUBECONFIG_FILE=$NODE_DIR/kubeconfig

now_ms() { date +%s%3N; }
log() { echo "node: $*" >&2; }

kubectl_node() { "$BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }

# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 0.25 s.
wait_for() {
  local what=$1 seconds=$2; shift 2
  local deadline=$(($(date +%s) + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      log "timed out after ${seconds}s waiting for $what"
      return 1
    fi
    sleep 0.25
  done
}

pid_of() { cat "$NODE_DIR/pids/$1" 2>/dev/null || true; }
alive() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
