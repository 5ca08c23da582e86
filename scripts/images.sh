#!/usr/bin/env bash
# Builds the container images the test node runs, without any image registry (none is
# reachable here), and imports them into a containerd.
#
#   scripts/images.sh build                 build every image unless its inputs are unchanged
#   scripts/images.sh import <containerd.sock>   import the built images (namespace k8s.io)
#
# Images (archives in .cache/images/, cached by a hash of their inputs):
#   localhost/nest-leader/pause:local        the sandbox image: test/control-plane/pause, static
#   docker.io/library/debian:bookworm-slim   Debian bookworm (mmdebstrap, minbase): stands in for
#                                            the official image the sidecar example's app names
#   localhost/nest-leader/node:24            Debian bookworm (mmdebstrap, minbase) + the Node 24
#                                            binary from the npm registry's `node` package (tools/)
#                                            + npm, i.e. what the official node:24-bookworm-slim has
#   docker.io/library/nest-leader-demo:dev   apps/demo/Dockerfile, NODE_IMAGE=the image above
#   docker.io/library/nest-leader-elector:dev  packages/nest-leader-elector/Dockerfile, likewise
# Tools come from Debian (buildah, mmdebstrap; installed when missing). buildah keeps its
# storage in .cache/images/buildah, so nothing outside the checkout's .cache changes.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="$repo_root/.cache/images"
storage="$out/buildah"
log() { echo "images.sh: $*" >&2; }

# shellcheck source=lib/debian-packages.sh
source "$repo_root/scripts/lib/debian-packages.sh"

buildah_() {
  buildah --root "$storage/root" --runroot "$storage/run" --storage-driver overlay "$@"
}

# hash_of FILE|DIR…: content hash of the named inputs (tracked and untracked-but-not-ignored
# files for directories), so an image is rebuilt exactly when what it is built from changed.
hash_of() {
  (
    cd "$repo_root"
    git ls-files -z --cached --others --exclude-standard -- "$@" | sort -z | xargs -0 sha256sum 2>/dev/null
  ) | sha256sum | cut -c1-16
}

# up_to_date NAME HASH: the archive of NAME exists and was built from HASH.
up_to_date() { [ -f "$out/$1.tar" ] && [ "$(cat "$out/$1.hash" 2>/dev/null)" = "$2" ]; }
done_with() { echo "$2" >"$out/$1.hash"; }

save() { # save IMAGE NAME: write the image as an OCI archive
  rm -f "$out/$2.tar.tmp"
  buildah_ push -q "$1" "oci-archive:$out/$2.tar.tmp:$1" >/dev/null
  mv "$out/$2.tar.tmp" "$out/$2.tar"
}

build_pause() {
  local hash; hash="$(hash_of test/control-plane/pause test/control-plane/go.mod)"
  up_to_date pause "$hash" && return 0
  log "pause: building (static Go program, one file)"
  (cd "$repo_root/test/control-plane" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$out/pause.bin" ./pause)
  local c; c="$(buildah_ from scratch)"
  buildah_ copy -q "$c" "$out/pause.bin" /pause >/dev/null
  buildah_ config --entrypoint '["/pause"]' --user 65535:65535 "$c"
  buildah_ commit -q --rm "$c" localhost/nest-leader/pause:local >/dev/null
  save localhost/nest-leader/pause:local pause
  done_with pause "$hash"
}

host_ca_bundle=/etc/ssl/certs/ca-certificates.crt

node_binary() { echo "$repo_root/tools/node_modules/node/bin/node"; }

build_node_base() {
  local node version npm_version hash
  node="$(readlink -f "$(node_binary)")"
  version="$("$node" --version)"
  npm_version=10
  hash="$(printf '%s %s %s %s' "$version" "$npm_version" "$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)" \
    "$(sha256sum "$host_ca_bundle" | cut -c1-16)" | sha256sum | cut -c1-16)"
  up_to_date node-base "$hash" && [ -f "$out/debian.tar" ] && return 0
  local t=$SECONDS work; work="$(mktemp -d)"
  log "node base: Debian bookworm minbase (mmdebstrap) + Node $version + npm $npm_version"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/rootfs.tar" >&2
  (cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null && mkdir npm && tar -xzf npm-*.tgz -C npm)
  local c; c="$(buildah_ from scratch)"
  buildah_ add -q "$c" "$work/rootfs.tar" / >/dev/null
  buildah_ config --cmd '["bash"]' "$c"
  # The sidecar example's app container names the official debian:bookworm-slim; this stands
  # in for it, built the same way (Debian's packages, minbase), since no registry is reachable.
  buildah_ commit -q "$c" docker.io/library/debian:bookworm-slim >/dev/null
  save docker.io/library/debian:bookworm-slim debian
  buildah_ copy -q "$c" "$node" /usr/local/bin/node >/dev/null
  # This machine's trust store (it may hold a CA of the network's egress proxy, without which
  # the builds' npm registry fetches fail with SELF_SIGNED_CERT_IN_CHAIN), for Node too.
  buildah_ copy -q "$c" "$host_ca_bundle" /etc/ssl/certs/ca-certificates.crt >/dev/null
  buildah_ copy -q "$c" "$work/npm/package" /usr/local/lib/node_modules/npm >/dev/null
  buildah_ run "$c" -- sh -ec 'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm; ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx; rm -rf /var/cache/apt/* /var/lib/apt/lists/*; node --version; npm --version' >&2
  buildah_ config --env NODE_VERSION="${version#v}" --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    --cmd '["node"]' "$c"
  buildah_ commit -q --rm "$c" localhost/nest-leader/node:24 >/dev/null
  save localhost/nest-leader/node:24 node-base
  rm -rf "$work"
  done_with node-base "$hash"
  log "node base: built in $((SECONDS - t)) s"
}

# build_dockerfile NAME IMAGE DOCKERFILE: build IMAGE from the repository's own Dockerfile,
# as `docker build -f DOCKERFILE .` would, with the local Node base.
build_dockerfile() {
  local name="$1" image="$2" dockerfile="$3" hash
  hash="$( (hash_of .; cat "$out/node-base.hash") | sha256sum | cut -c1-16)"
  up_to_date "$name" "$hash" && return 0
  # tshy (`pnpm pack`: check:package, the consumer matrix) writes src/package.json with "type":
  # "commonjs" for its CommonJS pass: a build context copied then compiles the library as
  # CommonJS, and the image's `import { … } from 'nest-leader'` fails in every pod.
  local dialect
  dialect="$(ls "$repo_root"/packages/*/src/package.json 2>/dev/null || true)"
  if [ -n "$dialect" ]; then
    log "$name: not built: $dialect exists (tshy is building in this checkout); run again after it"
    return 1
  fi
  local t=$SECONDS
  log "$name: building $dockerfile (npm registry fetches inside the build)"
  buildah_ bud --quiet --layers --network host --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
    --build-arg NODE_IMAGE=localhost/nest-leader/node:24 \
    --ignorefile "$repo_root/$dockerfile.dockerignore" \
    -f "$repo_root/$dockerfile" -t "$image" "$repo_root" >&2
  save "$image" "$name"
  done_with "$name" "$hash"
  log "$name: built in $((SECONDS - t)) s ($(du -h "$out/$name.tar" | cut -f1) archive)"
}

cmd_build() {
  ensure_debian_packages buildah mmdebstrap
  mkdir -p "$out"
  build_pause
  build_node_base
  build_dockerfile demo docker.io/library/nest-leader-demo:dev apps/demo/Dockerfile
  build_dockerfile elector docker.io/library/nest-leader-elector:dev packages/nest-leader-elector/Dockerfile
}

cmd_import() {
  local address="${1:?usage: images.sh import <containerd.sock>}" name
  for name in pause debian demo elector; do
    ctr --address "$address" -n k8s.io images import --no-unpack=false "$out/$name.tar" >/dev/null
  done
  log "imported: $(ctr --address "$address" -n k8s.io images ls -q | grep -E 'nest-leader' | tr '\n' ' ')"
}

case "${1:-}" in
  build) cmd_build ;;
  import) shift; cmd_import "$@" ;;
  *) echo "usage: scripts/images.sh build | import <containerd.sock>" >&2; exit 2 ;;
esac
