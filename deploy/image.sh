#!/usr/bin/env bash
# deno task image: builds localhost/crm:dev from deploy/Containerfile with
# podman, and keeps its build stage as localhost/crm-build:dev, the cache of
# the next build. The base is the official Deno image when it can be pulled,
# else one made locally from the same Deno release (deploy/base.sh);
# CRM_IMAGE_BASE names another.
set -euo pipefail
cd "$(dirname "$0")/.."
DENO_VERSION=2.9.6
OFFICIAL=docker.io/denoland/deno:distroless-$DENO_VERSION
TAG=${CRM_IMAGE_TAG:-localhost/crm:dev}

base=${CRM_IMAGE_BASE:-}
if [ -z "$base" ]; then
  if podman image exists "$OFFICIAL" || timeout 20 podman pull -q "$OFFICIAL" >/dev/null 2>&1; then
    base=$OFFICIAL
  else
    echo "image: $OFFICIAL cannot be pulled here; using a base made from Debian and npm" >&2
    base=$(deploy/base.sh "$DENO_VERSION")
  fi
fi
revision=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
build() {
  podman build --quiet --network host --build-arg "BASE=$base" -f deploy/Containerfile "$@" . >/dev/null
}
# The build stage under a tag of its own (TAG's name with -build): its layers are the cache of
# the next build, which then installs the dependencies again only when deno.json or deno.lock
# changed, and builds nothing when the code did not change.
build --target build -t "${TAG%:*}-build:${TAG##*:}"
build --label "org.opencontainers.image.revision=$revision" -t "$TAG"
# The previous builds of both tags are left untagged: drop them.
podman image prune -f >/dev/null
size=$(podman image inspect "$TAG" --format '{{.Size}}')
echo "built $TAG from $base ($((size / 1000000)) MB)"
