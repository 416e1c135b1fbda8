#!/usr/bin/env bash
# Makes localhost/deno-base:VERSION, a stand-in for the official Deno image
# where no registry is reachable: a root file system holding only the Deno
# binary from npm (the same release the official image carries), the C
# libraries it links, CA certificates and a writable /tmp, imported into
# podman. Cached: podman keeps the image, and the tarball is kept under
# ~/.cache/crm-tools so a machine whose podman storage was wiped imports it
# again in seconds.
#
#   deploy/base.sh VERSION     prints the image's name
set -euo pipefail
version=${1:?usage: deploy/base.sh DENO_VERSION}
image=localhost/deno-base:$version
cache=${CRM_TOOLS_CACHE:-$HOME/.cache/crm-tools}/deno-base-$version.tar

if podman image exists "$image"; then echo "$image"; exit 0; fi
if [ ! -f "$cache" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # Deno from npm, at exactly the version the official image would carry.
  (cd "$work" && npm pack --silent "deno@$version" >/dev/null && tar -xzf deno-*.tgz)
  npm_bin=$work/package
  (cd "$npm_bin" && npm install --silent --ignore-scripts=false >/dev/null 2>&1 || true)
  deno_bin=$(find "$work" -type f -name deno -perm -u+x | head -1)
  if [ -z "$deno_bin" ] || ! "$deno_bin" --version | grep -q "^deno $version "; then
    # The npm package downloads its binary in an install script; fall back to this machine's.
    deno_bin=$(readlink -f "$(command -v deno)")
    "$deno_bin" --version | grep -q "^deno $version " ||
      { echo "base.sh: need deno $version (npm install -g deno@$version)" >&2; exit 1; }
  fi
  root=$work/rootfs
  mkdir -p "$root/usr/bin" "$root/tmp" "$root/app" "$root/etc/ssl/certs"
  chmod 1777 "$root/tmp"
  install -m 0755 "$deno_bin" "$root/usr/bin/deno"
  # The dynamic loader and every library the binary links, at their own paths.
  for lib in $(ldd "$deno_bin" | grep -oE '/[^ ]+'); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
  cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/sbin/nologin\ndeno:x:10001:10001:deno:/tmp:/sbin/nologin\n' \
    >"$root/etc/passwd"
  printf 'root:x:0:\ndeno:x:10001:\n' >"$root/etc/group"
  mkdir -p "$(dirname "$cache")"
  tar -C "$root" --owner=0 --group=0 -cf "$cache.partial" .
  mv "$cache.partial" "$cache"
fi
podman import --quiet \
  --change 'ENV PATH=/usr/bin' \
  --change 'ENV DENO_NO_UPDATE_CHECK=1' \
  --change 'CMD ["deno"]' \
  "$cache" "$image" >/dev/null
echo "$image"
