#!/usr/bin/env bash
# Builds or installs the real tools the deployment, tracing and fault tests
# run, once per machine: Go binaries are built from the Go module proxy into
# ~/.cache/crm-tools/<tool>-<version>/ and linked into ~/.cache/crm-tools/bin,
# so a second run only checks that each is present.
#
#   .ci/tools.sh [TOOL ...]   TOOL: helm kubectl-validate kube jaeger
#                             toxiproxy grpcurl podman etcd promtool sloth
#                             mailpit (the SMTP server the mail tests read)
#                             collector (an OpenTelemetry Collector with the
#                             components deploy/otel-collector.yaml uses)
#                             node (kubelet, kube-proxy, kube-router, CoreDNS,
#                             containerd and the CNI plugins for the
#                             real-node test, test/realnode_test.ts);
#                             default: all
#
# Print the bin folder with `.ci/tools.sh --bin`.
set -euo pipefail

CACHE=${CRM_TOOLS_CACHE:-$HOME/.cache/crm-tools}
BIN=$CACHE/bin
mkdir -p "$BIN"
if [ "${1:-}" = "--bin" ]; then echo "$BIN"; exit 0; fi

HELM_VERSION=v4.3.1
KUBECTL_VALIDATE_VERSION=v0.0.4
KUBE_VERSION=v1.37.2
JAEGER_VERSION=v1.76.0
TOXIPROXY_VERSION=v2.12.0
GRPCURL_VERSION=v1.9.4
SLOTH_VERSION=v0.16.0
KUBE_ROUTER_VERSION=v2.1.0
COREDNS_VERSION=v1.15.0
MAILPIT_VERSION=v1.27.11
# One collector release: the builder v0.X.0 pairs with the core and contrib
# components v0.X.0 and the core's stable modules (confmap and its providers)
# v1.Y.0, as the builder's own default manifest of that release says.
COLLECTOR_VERSION=v0.165.0
COLLECTOR_STABLE_VERSION=v1.71.0

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
}

# link NAME DIR/FILE: puts a built binary on the shared bin folder.
link() { ln -sf "$2" "$BIN/$1"; }

# go_install DIR PACKAGE@VERSION NAME...: `go install` into DIR unless done.
go_install() {
  local dir=$1 pkg=$2; shift 2
  if [ ! -f "$dir/.done" ]; then
    echo "building $pkg (cached afterwards in $dir)"
    mkdir -p "$dir"
    GOBIN=$dir GOFLAGS=-buildvcs=false go install "$pkg"
    touch "$dir/.done"
  fi
  for name in "$@"; do link "$name" "$dir/$name"; done
}

# go_module_file MODULE@VERSION FIELD: a file of a module as Go itself fetches it
# (through GOPROXY, checked against the checksum database, kept in the module
# cache); FIELD is GoMod (its go.mod) or Dir (its unpacked source folder).
go_module_file() {
  (cd "${TMPDIR:-/tmp}" && go mod download -json "$1") |
    jq -er "if .Error then (.Error + \"\\n\" | halt_error) else .$2 end"
}

build_helm() {
  go_install "$CACHE/helm-$HELM_VERSION" "helm.sh/helm/v4/cmd/helm@$HELM_VERSION" helm
}

build_kubectl_validate() {
  go_install "$CACHE/kubectl-validate-$KUBECTL_VALIDATE_VERSION" \
    "sigs.k8s.io/kubectl-validate@$KUBECTL_VALIDATE_VERSION" kubectl-validate
}

build_toxiproxy() {
  local dir=$CACHE/toxiproxy-$TOXIPROXY_VERSION
  go_install "$dir" "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION"
  link toxiproxy-server "$dir/server"
}

build_grpcurl() {
  go_install "$CACHE/grpcurl-$GRPCURL_VERSION" \
    "github.com/fullstorydev/grpcurl/cmd/grpcurl@$GRPCURL_VERSION" grpcurl
}

# The control plane: k8s.io/kubernetes cannot be `go install`ed (its go.mod
# replaces every staging module with a folder), so a small module of ours
# requires it and points each staging module at its published version.
# kube_module DIR CMD...: builds k8s.io/kubernetes/cmd/CMD each into DIR.
kube_module() {
  local dir=$1; shift
  local cmds="$*"
  local minor=${KUBE_VERSION#v1.}; minor=${minor%%.*}
  local staging=v0.${KUBE_VERSION#v1.}
  if [ ! -f "$dir/.done" ]; then
    echo "building Kubernetes $KUBE_VERSION $cmds (cached afterwards in $dir)"
    local mod=$dir/module
    mkdir -p "$mod"
    # Its staging modules, read from its own go.mod.
    local kube_gomod
    kube_gomod=$(go_module_file "k8s.io/kubernetes@$KUBE_VERSION" GoMod)
    {
      echo "module crm.local/kubetools"
      echo
      echo "go 1.25"
      echo
      echo "require k8s.io/kubernetes $KUBE_VERSION"
      echo
      echo "replace ("
      grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$kube_gomod" | awk '{print $1}' |
        grep -vE 'sample-(cli-plugin|controller)$' |
        while read -r m; do echo "	$m => $m $staging"; done
      echo ")"
    } >"$mod/go.mod"
    {
      echo "//go:build tools"
      echo
      echo "package tools"
      echo
      echo "import ("
      for c in $cmds; do echo "	_ \"k8s.io/kubernetes/cmd/$c\""; done
      echo ")"
    } >"$mod/tools.go"
    local ldflags="-X k8s.io/component-base/version.gitVersion=$KUBE_VERSION"
    ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
    ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor"
    ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION"
    (
      cd "$mod"
      GOFLAGS=-mod=mod go mod tidy
      local pkgs=()
      for c in $cmds; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
      go build -ldflags "$ldflags" -o "$dir/" "${pkgs[@]}"
    )
    touch "$dir/.done"
  fi
  for c in $cmds; do link "$c" "$dir/$c"; done
}

build_kube() {
  kube_module "$CACHE/kube-$KUBE_VERSION" kube-apiserver kube-controller-manager kube-scheduler kubectl
}

# A real node (test/realnode_test.ts, deploy/node/): containerd 1.6, runc and
# the CNI plugins from Debian; kubelet and kube-proxy built like the control
# plane; kube-router as the NetworkPolicy firewall and CoreDNS on the host.
build_node() {
  apt_install containerd runc containernetworking-plugins busybox-static ipset conntrack gcc libc6-dev
  kube_module "$CACHE/kube-node-$KUBE_VERSION" kubelet kube-proxy
  go_install "$CACHE/kube-router-$KUBE_ROUTER_VERSION" \
    "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router@$KUBE_ROUTER_VERSION" kube-router
  go_install "$CACHE/coredns-$COREDNS_VERSION" "github.com/coredns/coredns@$COREDNS_VERSION" coredns
  link containerd "$(command -v containerd || echo /usr/bin/containerd)"
  link ctr "$(command -v ctr || echo /usr/bin/ctr)"
}

# Jaeger v2 (the v1.76.0 tag's cmd/jaeger): its go.mod replaces sarama, so a
# module of ours requires it with the same replace and Jaeger's own go.sum.
build_jaeger() {
  local dir=$CACHE/jaeger-$JAEGER_VERSION
  if [ ! -f "$dir/.done" ]; then
    echo "building Jaeger $JAEGER_VERSION (cached afterwards in $dir)"
    local mod=$dir/module
    mkdir -p "$mod"
    cat >"$mod/go.mod" <<EOF
module crm.local/jaegertool

go 1.25

require github.com/jaegertracing/jaeger $JAEGER_VERSION

replace github.com/Shopify/sarama => github.com/Shopify/sarama v1.33.0
EOF
    cat >"$mod/tools.go" <<'EOF'
//go:build tools

package tools

import _ "github.com/jaegertracing/jaeger/cmd/jaeger"
EOF
    (
      cd "$mod"
      cp "$(go_module_file "github.com/jaegertracing/jaeger@$JAEGER_VERSION" Dir)/go.sum" go.sum
      chmod u+w go.sum
      GOFLAGS=-mod=mod go mod tidy
      go build -o "$dir/jaeger" github.com/jaegertracing/jaeger/cmd/jaeger
    )
    touch "$dir/.done"
  fi
  link jaeger "$dir/jaeger"
}

build_podman() {
  apt_install podman buildah runc debootstrap uidmap fuse-overlayfs
  # crun fails here on setrlimit; runc works. Builds read the same file.
  local conf=/etc/containers/containers.conf.d
  if [ ! -f "$conf/50-crm.conf" ]; then
    as_root mkdir -p "$conf"
    printf '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n' |
      as_root tee "$conf/50-crm.conf" >/dev/null
  fi
}

# promtool (alert and recording rule checks and tests) from Debian's prometheus
# package, unpacked without installing the server.
build_promtool() {
  local dir=$CACHE/promtool-debian
  if [ ! -f "$dir/.done" ]; then
    echo "unpacking promtool from Debian's prometheus package (cached afterwards in $dir)"
    mkdir -p "$dir"
    as_root apt-get update -qq
    (cd "$dir" && apt-get download prometheus >/dev/null && dpkg -x prometheus_*.deb root && rm -f prometheus_*.deb)
    touch "$dir/.done"
  fi
  link promtool "$dir/root/usr/bin/promtool"
}

# sloth: generates the chart's SLO rules (helm/crm/slo/); the test that they
# are current runs it.
build_sloth() {
  go_install "$CACHE/sloth-$SLOTH_VERSION" "github.com/slok/sloth/cmd/sloth@$SLOTH_VERSION" sloth
}

# mailpit: an SMTP server with an HTTP API over what it received; the email
# report and traffic alert tests send to it and read the mails back.
build_mailpit() {
  go_install "$CACHE/mailpit-$MAILPIT_VERSION" "github.com/axllent/mailpit@$MAILPIT_VERSION" mailpit
}

# An OpenTelemetry Collector built by the collector builder (ocb) with exactly
# the components deploy/otel-collector.yaml uses: the core's otlp receiver,
# batch processor, otlphttp and debug exporters, and contrib's prometheus
# exporter; test/system/otel_collector_test.ts runs that file with it.
build_collector() {
  local dir=$CACHE/collector-$COLLECTOR_VERSION
  if [ ! -f "$dir/.done" ]; then
    echo "building the OpenTelemetry Collector $COLLECTOR_VERSION (cached afterwards in $dir)"
    mkdir -p "$dir"
    GOBIN=$dir GOFLAGS=-buildvcs=false go install "go.opentelemetry.io/collector/cmd/builder@$COLLECTOR_VERSION"
    local core=go.opentelemetry.io/collector
    local contrib=github.com/open-telemetry/opentelemetry-collector-contrib
    cat >"$dir/manifest.yaml" <<EOF
dist:
  module: crm.local/otelcol-crm
  name: otelcol-crm
  description: OpenTelemetry Collector for the CRM (deploy/otel-collector.yaml)
  version: ${COLLECTOR_VERSION#v}
  output_path: $dir/build

receivers:
  - gomod: $core/receiver/otlpreceiver $COLLECTOR_VERSION
processors:
  - gomod: $core/processor/batchprocessor $COLLECTOR_VERSION
exporters:
  - gomod: $core/exporter/otlphttpexporter $COLLECTOR_VERSION
  - gomod: $core/exporter/debugexporter $COLLECTOR_VERSION
  - gomod: $contrib/exporter/prometheusexporter $COLLECTOR_VERSION

providers:
  - gomod: $core/confmap/provider/envprovider $COLLECTOR_STABLE_VERSION
  - gomod: $core/confmap/provider/fileprovider $COLLECTOR_STABLE_VERSION
  - gomod: $core/confmap/provider/yamlprovider $COLLECTOR_STABLE_VERSION
EOF
    GOFLAGS=-buildvcs=false "$dir/builder" --config "$dir/manifest.yaml"
    touch "$dir/.done"
  fi
  link otelcol-crm "$dir/build/otelcol-crm"
}

build_etcd() {
  apt_install etcd-server
  link etcd "$(command -v etcd || echo /usr/bin/etcd)"
}

# Sourcing the file defines the functions without building anything.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then return 0; fi

all="podman etcd grpcurl toxiproxy helm kubectl-validate jaeger kube promtool sloth mailpit collector node"
for tool in ${@:-$all}; do
  case "$tool" in
    helm) build_helm ;;
    kubectl-validate) build_kubectl_validate ;;
    kube) build_kube ;;
    jaeger) build_jaeger ;;
    toxiproxy) build_toxiproxy ;;
    grpcurl) build_grpcurl ;;
    podman) build_podman ;;
    etcd) build_etcd ;;
    promtool) build_promtool ;;
    sloth) build_sloth ;;
    mailpit) build_mailpit ;;
    collector) build_collector ;;
    node) build_node ;;
    *) echo "tools.sh: unknown tool $tool" >&2; exit 2 ;;
  esac
done
