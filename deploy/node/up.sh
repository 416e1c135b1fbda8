#!/usr/bin/env bash
# Brings one real Kubernetes node up on this machine, as root: etcd,
# kube-apiserver, kube-controller-manager and kube-scheduler; containerd 1.6
# with runc and the bridge CNI plugin; the kubelet; kube-proxy (iptables
# Services); kube-router as the NetworkPolicy firewall; CoreDNS for cluster
# DNS; and a Postgres and a Redis of the node's own on the node address, where
# pods reach them. The image localhost/crm:dev is loaded from podman.
#
#   NODE_DIR=/tmp/crm-node deploy/node/up.sh
#
# Writes NODE_DIR/kubeconfig (an admin token) and NODE_DIR/env (the URLs of
# the node's Postgres and Redis). Whatever state the host was in is recorded
# first: deploy/node/down.sh puts it back, whether this got all the way up or
# not. Binaries come from .ci/tools.sh (`kube`, `etcd`, `node`). Timings of
# each step go to stderr.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=deploy/node/common.sh
. "$HERE/common.sh"
CRM_IMAGE=${CRM_IMAGE:-localhost/crm:dev}

[ "$(id -u)" = 0 ] || { log "must run as root (containerd, the kubelet, iptables)"; exit 1; }
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy \
  kube-router coredns; do
  [ -x "$BIN/$b" ] || { log "$BIN/$b missing: run .ci/tools.sh kube etcd node"; exit 1; }
done
for b in containerd ctr runc podman openssl ipset gcc; do
  command -v "$b" >/dev/null || { log "$b missing: run .ci/tools.sh podman node"; exit 1; }
done
[ -x /usr/lib/cni/bridge ] || { log "CNI plugins missing: run .ci/tools.sh node"; exit 1; }
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PG_BIN/initdb" ] || { log "Postgres server binaries missing"; exit 1; }
if [ -e "$NODE_DIR/host" ]; then
  # A node whose processes all died with the run that started it (a killed
  # session, a crashed test) still holds the host: down.sh puts it back first.
  # A node with a live process belongs to someone else and is left alone.
  for f in "$NODE_DIR"/pids/*; do
    [ -e "$f" ] || continue
    if alive "$(basename "$f")"; then
      log "$NODE_DIR holds a running node ($(basename "$f") is alive): run deploy/node/down.sh first"
      exit 1
    fi
  done
  log "$NODE_DIR holds a node left by a run that died: taking it down first"
  bash "$HERE/down.sh" || { log "down.sh could not put the host back"; exit 1; }
fi

T0=$(now_ms)
step_start=$T0
step() {
  local t
  t=$(now_ms)
  log "$(printf '%-34s %6d ms (total %6d ms)' "$1" $((t - step_start)) $((t - T0)))"
  step_start=$t
}

mkdir -p "$NODE_DIR"/{host,pids,logs,pki,conf,cni/net.d,cni/ipam,containerd,kubelet,pod-logs}

# --- What the host looked like before, for down.sh.
for s in $SYSCTLS; do echo "$s=$(sysctl -n "$s")"; done >"$NODE_DIR/host/sysctls"
for p in $OUTSIDE_PATHS; do [ -e "$p" ] && echo "$p"; done >"$NODE_DIR/host/paths" || true
for cmd in iptables ip6tables; do
  "$cmd-save" 2>/dev/null | sed -n 's/^\*//p' >"$NODE_DIR/host/$cmd-tables" || true
done
nft list tables 2>/dev/null >"$NODE_DIR/host/nft-tables" || true
if ! ip -4 addr show dev lo | grep -q " $NODE_IP/"; then
  ip addr add "$NODE_IP/32" dev lo
  touch "$NODE_DIR/host/added-address"
fi
step "host state recorded"

# start NAME COMMAND...: runs in its own session, output in logs/NAME.log.
start() {
  local name=$1; shift
  setsid "$@" >"$NODE_DIR/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$NODE_DIR/pids/$name"
}

# --- Postgres and Redis for the pods.
mkdir -p "$NODE_DIR/pg"
chown postgres: "$NODE_DIR/pg"
runuser -u postgres -- "$PG_BIN/initdb" -D "$NODE_DIR/pg/data" -U postgres -A trust \
  >"$NODE_DIR/logs/initdb.log" 2>&1
cat >"$NODE_DIR/pg/data/pg_hba.conf" <<EOF
local all all trust
host all all $NODE_IP/32 trust
host all all $POD_CIDR trust
EOF
start postgres setpriv --reuid=postgres --regid=postgres --init-groups "$PG_BIN/postgres" -D "$NODE_DIR/pg/data" \
  -c listen_addresses="$NODE_IP" -p "$PG_PORT" -c unix_socket_directories="$NODE_DIR/pg" \
  -c fsync=off -c synchronous_commit=off -c max_connections=200
mkdir -p "$NODE_DIR/redis"
start redis redis-server --bind "$NODE_IP" --port "$REDIS_PORT" --protected-mode no \
  --save "" --appendonly no --dir "$NODE_DIR/redis"
wait_for postgres 30 "$PG_BIN/pg_isready" -q -h "$NODE_IP" -p "$PG_PORT"
"$PG_BIN/psql" -q -h "$NODE_IP" -p "$PG_PORT" -U postgres -c "CREATE DATABASE crm" >/dev/null
wait_for redis 10 redis-cli -h "$NODE_IP" -p "$REDIS_PORT" ping
cat >"$NODE_DIR/env" <<EOF
DATABASE_URL=postgres://postgres@$NODE_IP:$PG_PORT/crm
REDIS_URL=redis://$NODE_IP:$REDIS_PORT
EOF
step "postgres and redis"

# --- Keys: service accounts, an admin token, a CA for the kubelet's clients.
PKI=$NODE_DIR/pki
openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=crm-node-ca" \
  -keyout "$PKI/ca.key" -out "$PKI/ca.crt" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=kube-apiserver-kubelet-client" \
  -keyout "$PKI/kubelet-client.key" -out "$PKI/kubelet-client.csr" 2>/dev/null
openssl x509 -req -in "$PKI/kubelet-client.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" \
  -CAcreateserial -days 2 -out "$PKI/kubelet-client.crt" 2>/dev/null
TOKEN=$(openssl rand -hex 24)
echo "$TOKEN,admin,admin,system:masters" >"$PKI/tokens.csv"
cat >"$KUBECONFIG_FILE" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:$API_PORT", insecure-skip-tls-verify: true}
users:
- name: admin
  user: {token: "$TOKEN"}
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
EOF
chmod 600 "$KUBECONFIG_FILE"
step "keys"

# --- Control plane. Debian's etcd 3.4 lacks RequestWatchProgress, which
# streaming lists need: WatchList off everywhere.
start etcd "$BIN/etcd" --data-dir "$NODE_DIR/etcd" --log-level error \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT"
start kube-apiserver "$BIN/kube-apiserver" \
  --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
  --secure-port="$API_PORT" --bind-address=127.0.0.1 \
  --advertise-address="$NODE_IP" --endpoint-reconciler-type=none \
  --cert-dir="$NODE_DIR/apiserver" --token-auth-file="$PKI/tokens.csv" \
  --authorization-mode=Node,RBAC \
  --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
  --service-cluster-ip-range="$SERVICE_CIDR" \
  --kubelet-client-certificate="$PKI/kubelet-client.crt" \
  --kubelet-client-key="$PKI/kubelet-client.key" \
  --kubelet-preferred-address-types=InternalIP \
  --feature-gates=WatchList=false
wait_for kube-apiserver 60 sh -c "[ \"\$('$BIN/kubectl' --kubeconfig '$KUBECONFIG_FILE' get --raw /readyz 2>/dev/null)\" = ok ]"
step "etcd and kube-apiserver ready"
start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$KUBECONFIG_FILE" \
  --service-account-private-key-file="$PKI/sa.key" \
  --root-ca-file="$NODE_DIR/apiserver/apiserver.crt" \
  --use-service-account-credentials=false --leader-elect=false --controllers='*' \
  --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --feature-gates=WatchList=false
start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$KUBECONFIG_FILE" --leader-elect=false \
  --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" --feature-gates=WatchList=false

# --- containerd and the images. No registry: the sandbox image is built here.
cat >"$NODE_DIR/conf/containerd.toml" <<EOF
version = 2
root = "$NODE_DIR/containerd/root"
state = "$NODE_DIR/containerd/state"

[grpc]
  address = "$SOCK"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:v1"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  tolerate_missing_hugetlb_controller = true
  # Root lacks CAP_SYS_RESOURCE here: the sandbox's negative oom_score_adj would fail in runc.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$NODE_DIR/cni/net.d"
[plugins."io.containerd.internal.v1.opt"]
  path = "$NODE_DIR/containerd/opt"
EOF
cat >"$NODE_DIR/cni/net.d/10-crmnode.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "crmnode",
  "plugins": [{
    "type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
    "ipam": {
      "type": "host-local", "dataDir": "$NODE_DIR/cni/ipam",
      "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]],
      "routes": [{"dst": "0.0.0.0/0"}]
    }
  }]
}
EOF
start containerd containerd --config "$NODE_DIR/conf/containerd.toml"
IMAGES=${CRM_TOOLS_CACHE:-$HOME/.cache/crm-tools}/node-images
if [ ! -f "$IMAGES/pause-v1.tar" ]; then
  mkdir -p "$IMAGES" "$NODE_DIR/pause/rootfs"
  gcc -static -O2 -o "$NODE_DIR/pause/rootfs/pause" "$HERE/pause.c"
  tar -C "$NODE_DIR/pause/rootfs" -c . |
    podman import --change 'ENTRYPOINT ["/pause"]' - localhost/pause:v1 >/dev/null
  podman save -q localhost/pause:v1 >"$IMAGES/pause-v1.tar.part"
  podman rmi -f localhost/pause:v1 >/dev/null
  mv "$IMAGES/pause-v1.tar.part" "$IMAGES/pause-v1.tar"
fi
wait_for containerd 20 ctr -a "$SOCK" version
ctr -a "$SOCK" -n k8s.io images import "$IMAGES/pause-v1.tar" >/dev/null
podman image exists "$CRM_IMAGE" || { log "$CRM_IMAGE missing: run deno task image"; exit 1; }
podman save -q "$CRM_IMAGE" | ctr -a "$SOCK" -n k8s.io images import - >/dev/null
step "containerd and images"

# --- The node.
cat >"$NODE_DIR/conf/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://$SOCK
cgroupDriver: cgroupfs
# A cgroup v1 host: kubelets from 1.35 refuse it otherwise.
failCgroupV1: false
failSwapOn: false
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
podLogsDir: $NODE_DIR/pod-logs
resolvConf: /etc/resolv.conf
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
# The imported images are the only copies: never collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
volumePluginDir: $NODE_DIR/kubelet/volume-plugins
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
EOF
# The kubelet sets these host-wide when it starts; they are put back once the node is Ready.
for s in kernel.panic kernel.panic_on_oops vm.overcommit_memory; do
  echo "$s=$(sysctl -n "$s")"
done >"$NODE_DIR/kubelet-sysctls"
start kubelet "$BIN/kubelet" --config="$NODE_DIR/conf/kubelet.yaml" \
  --kubeconfig="$KUBECONFIG_FILE" --root-dir="$NODE_DIR/kubelet" \
  --cert-dir="$NODE_DIR/kubelet/pki" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP"
cat >"$NODE_DIR/conf/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $KUBECONFIG_FILE}
hostnameOverride: $NODE_NAME
mode: iptables
clusterCIDR: $POD_CIDR
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
nodePortAddresses: ["$NODE_IP/32"]
# Leave the host's conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
EOF
start kube-proxy "$BIN/kube-proxy" --config="$NODE_DIR/conf/kube-proxy.yaml"
cat >"$NODE_DIR/conf/Corefile" <<EOF
.:53 {
    bind $NODE_IP
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $KUBECONFIG_FILE local
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
}
EOF
start coredns "$BIN/coredns" -conf "$NODE_DIR/conf/Corefile"
wait_for "node Ready" 90 sh -c "'$BIN/kubectl' --kubeconfig '$KUBECONFIG_FILE' get node $NODE_NAME -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
while IFS= read -r line; do sysctl -q -w "$line"; done <"$NODE_DIR/kubelet-sysctls"
step "kubelet: node Ready"
start kube-router "$BIN/kube-router" --kubeconfig="$KUBECONFIG_FILE" \
  --run-firewall=true --run-router=false --run-service-proxy=false \
  --hostname-override="$NODE_NAME" --service-cluster-ip-range="$SERVICE_CIDR" \
  --health-port="$ROUTER_HEALTH_PORT"
wait_for kube-router 60 curl -fsS "http://127.0.0.1:$ROUTER_HEALTH_PORT/healthz"
wait_for "default ServiceAccount" 60 "$BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" \
  get serviceaccount default -n default
wait_for kube-proxy 30 curl -fsS "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz"
step "kube-proxy, kube-router, coredns"
log "up in $(($(now_ms) - T0)) ms; KUBECONFIG=$KUBECONFIG_FILE"
