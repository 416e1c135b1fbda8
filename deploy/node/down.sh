#!/usr/bin/env bash
# Takes down the node deploy/node/up.sh brought up (fully or partly) and puts
# the host back as up.sh found it: pods deleted through the API first (a
# killed kubelet leaves containers, network namespaces and mounts behind),
# then every process it started, by the ids it recorded; then mounts, the
# bridge, iptables chains and ipsets, the node address on lo, the sysctls, the
# paths outside NODE_DIR, and NODE_DIR itself. Finally checks that nothing of
# the node is left and exits non-zero, naming what, if something is.
#
#   NODE_DIR=/tmp/crm-node deploy/node/down.sh
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=deploy/node/common.sh
. "$HERE/common.sh"

[ "$(id -u)" = 0 ] || { log "must run as root"; exit 1; }
[ -d "$NODE_DIR/host" ] || { log "no node under $NODE_DIR"; exit 0; }
T0=$(now_ms)

# stop NAME [SECONDS] [SIGNAL]: SIGNAL (TERM), then SIGKILL after SECONDS; waits for the exit.
stop() {
  local name=$1 grace=${2:-10} signal=${3:-TERM} pid i
  pid=$(pid_of "$name")
  [ -n "$pid" ] || return 0
  kill -"$signal" "$pid" 2>/dev/null || { rm -f "$NODE_DIR/pids/$name"; return 0; }
  for ((i = 0; i < grace * 4; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name did not stop in ${grace}s: SIGKILL"
    kill -KILL "$pid" 2>/dev/null
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$NODE_DIR/pids/$name"
}

ctr_node() { ctr -a "$SOCK" -n k8s.io "$@"; }

# --- Pods away through the API while the kubelet still runs.
if alive kube-apiserver && alive kubelet; then
  kubectl_node delete deployments,statefulsets,daemonsets,replicasets,jobs,cronjobs --all \
    --all-namespaces --cascade=orphan --wait=false >/dev/null 2>&1
  kubectl_node delete pods --all --all-namespaces --grace-period=1 --wait=false >/dev/null 2>&1
  deadline=$(($(date +%s) + 90))
  until [ -z "$(kubectl_node get pods -A -o name 2>/dev/null)" ] &&
    [ -z "$(ctr_node tasks ls -q 2>/dev/null)" ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then log "pods still there after 90 s"; break; fi
    sleep 0.5
  done
  log "pods deleted: $(($(now_ms) - T0)) ms"
fi

stop kube-router 10
stop kube-proxy 10
stop coredns 10
stop kubelet 15
# Sandboxes and containers the kubelet did not remove, through containerd itself.
if alive containerd; then
  for task in $(ctr_node tasks ls -q 2>/dev/null); do
    ctr_node tasks kill -s SIGKILL "$task" >/dev/null 2>&1
  done
  sleep 0.5
  for task in $(ctr_node tasks ls -q 2>/dev/null); do ctr_node tasks rm -f "$task" >/dev/null 2>&1; done
  for c in $(ctr_node containers ls -q 2>/dev/null); do ctr_node containers rm "$c" >/dev/null 2>&1; done
fi
stop kube-scheduler 10
stop kube-controller-manager 10
stop kube-apiserver 15
stop etcd 10
stop containerd 10
# The runc shims containerd started outlive it by design: those serving this
# node's socket (their -address names it) are stopped by their process id.
for pid in $(pgrep -x containerd-shim-runc-v2 2>/dev/null || true); do
  if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-address $SOCK"; then
    kill -KILL "$pid" 2>/dev/null
  fi
done
stop redis 10
# SIGINT: Postgres's fast shutdown, which does not wait for clients to leave.
stop postgres 20 INT
log "processes stopped: $(($(now_ms) - T0)) ms"

# --- Network namespaces made for this node's pods, mounts under NODE_DIR.
if [ -d "$NODE_DIR/cni/ipam" ] && [ -d /var/run/netns ]; then
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep '^cni-' || true); do
    # Only namespaces whose interfaces hold an address of this node's pod range.
    if ip netns exec "$ns" ip -4 addr 2>/dev/null | grep -q "inet ${POD_CIDR%.*}\."; then
      ip netns delete "$ns"
    fi
  done
fi
for _ in 1 2 3; do
  mounts=$(awk -v d="$NODE_DIR" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r)
  [ -z "$mounts" ] && break
  for m in $mounts; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
done
ip link show "$BRIDGE" >/dev/null 2>&1 && ip link delete "$BRIDGE"

# --- iptables: the chains kube-proxy, kube-router and the CNI plugins made,
# and every rule that jumps to them; other rules stay as they are.
for cmd in iptables ip6tables; do
  for table in $("$cmd-save" 2>/dev/null | sed -n 's/^\*//p'); do
    dump=$("$cmd-save" -t "$table" 2>/dev/null) || continue
    grep -qE 'KUBE-|CNI-' <<<"$dump" || continue
    grep -vE 'KUBE-|CNI-' <<<"$dump" | "$cmd-restore" -T "$table" ||
      log "$cmd-restore $table failed"
  done
  # Tables that appeared with the node and are empty now.
  for table in $("$cmd-save" 2>/dev/null | sed -n 's/^\*//p'); do
    grep -qx "$table" "$NODE_DIR/host/$cmd-tables" 2>/dev/null && continue
    if ! "$cmd-save" -t "$table" | grep -qE '^-A '; then
      family=$([ "$cmd" = iptables ] && echo ip || echo ip6)
      nft delete table "$family" "$table" 2>/dev/null || true
    fi
  done
done
# nftables tables of kube-proxy's or kube-router's own, when they were not there before.
nft list tables 2>/dev/null | grep -i kube | while IFS= read -r table; do
  grep -qxF "$table" "$NODE_DIR/host/nft-tables" || nft delete ${table#table }
done
for set in $(ipset list -n 2>/dev/null | grep -E '^(KUBE-|kube-router)' || true); do
  ipset destroy "$set" 2>/dev/null || log "ipset $set still in use"
done

# --- The address, the sysctls, the paths outside NODE_DIR.
if [ -f "$NODE_DIR/host/added-address" ]; then ip addr del "$NODE_IP/32" dev lo 2>/dev/null; fi
while IFS= read -r line; do sysctl -q -w "$line"; done <"$NODE_DIR/host/sysctls"
for p in $OUTSIDE_PATHS; do
  grep -qx "$p" "$NODE_DIR/host/paths" && continue
  [ -e "$p" ] || continue
  awk -v d="$p" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | xargs -r -n1 umount -l
  rm -rf "$p"
done

# --- Check.
left=()
for f in "$NODE_DIR"/pids/*; do [ -e "$f" ] && left+=("process $(basename "$f")"); done
awk -v d="$NODE_DIR" 'index($2, d) == 1' /proc/mounts | grep -q . && left+=("mounts under $NODE_DIR")
ip link show "$BRIDGE" >/dev/null 2>&1 && left+=("bridge $BRIDGE")
ip -4 addr show dev lo | grep -q " $NODE_IP/" && [ -f "$NODE_DIR/host/added-address" ] &&
  left+=("address $NODE_IP on lo")
for cmd in iptables ip6tables; do
  "$cmd-save" 2>/dev/null | grep -qE 'KUBE-|CNI-' && left+=("$cmd chains")
done
ipset list -n 2>/dev/null | grep -qE '^(KUBE-|kube-router)' && left+=("ipsets")
nft list tables 2>/dev/null | grep -i kube | grep -vxFf "$NODE_DIR/host/nft-tables" | grep -q . &&
  left+=("nftables tables")
while IFS= read -r line; do
  [ "$(sysctl -n "${line%%=*}")" = "${line#*=}" ] || left+=("sysctl ${line%%=*}")
done <"$NODE_DIR/host/sysctls"
for pid in $(pgrep -x containerd-shim-runc-v2 2>/dev/null || true); do
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-address $SOCK" && left+=("shim $pid")
done
if [ ${#left[@]} -eq 0 ]; then
  rm -rf "$NODE_DIR"
  log "down in $(($(now_ms) - T0)) ms, nothing left"
else
  log "down in $(($(now_ms) - T0)) ms; left behind: ${left[*]} (logs kept in $NODE_DIR/logs)"
  exit 1
fi
