#!/usr/bin/env bash
# Builds toxiproxy-server (Shopify/toxiproxy, the TCP fault proxy of the chaos harness) from the
# Go module proxy, at the version pinned in test/toxiproxy/go.mod, into test/toxiproxy/.bin/.
#
#   scripts/toxiproxy.sh build         build .bin/toxiproxy-server unless it is up to date
#   scripts/toxiproxy.sh run [args…]   build (cached), then exec it in the foreground
#
# The binary is rebuilt only when a hash of go.mod, go.sum, the Go version and the link flags
# differs from the stamp beside it (.bin/source.sha256). Go's default module and build caches
# are used. Progress: one line per compiled package (go build -v) while building.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="$repo_root/test/toxiproxy"
bin_dir="$module_dir/.bin"
binary="$bin_dir/toxiproxy-server"
stamp="$bin_dir/source.sha256"
tool="github.com/Shopify/toxiproxy/v2/cmd/server"

log() { echo "toxiproxy.sh: $*" >&2; }

usage() {
  sed -n '2,6s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

# The module version from go.mod, so `toxiproxy-server -version` reports it instead of "git".
ldflags() {
  local version
  version="$(cd "$module_dir" && go list -m -f '{{.Version}}' github.com/Shopify/toxiproxy/v2)"
  echo "-s -w -X github.com/Shopify/toxiproxy/v2.Version=$version"
}

source_hash() {
  local flags="$1"
  {
    (cd "$module_dir" && sha256sum go.mod go.sum)
    go env GOVERSION GOOS GOARCH CGO_ENABLED
    echo "$flags"
  } | sha256sum | cut -d' ' -f1
}

build() {
  local flags hash start end
  flags="$(ldflags)"
  hash="$(source_hash "$flags")"
  if [[ -x "$binary" && -f "$stamp" && "$(cat "$stamp")" == "$hash" ]]; then
    log "up to date: $binary"
    return 0
  fi
  mkdir -p "$bin_dir"
  log "building $binary from $tool (go build -v: one line per compiled package)"
  start=$(date +%s)
  (cd "$module_dir" && go build -v -buildvcs=false -ldflags "$flags" -o "$binary.tmp" "$tool" 2>&1) |
    sed -u 's/^/toxiproxy.sh:   /' >&2
  mv "$binary.tmp" "$binary"
  echo "$hash" > "$stamp"
  end=$(date +%s)
  log "built in $((end - start))s: $binary"
}

cmd="${1:-}"
case "$cmd" in
  build)
    shift
    [[ $# -eq 0 ]] || usage
    build
    ;;
  run)
    shift
    build
    exec "$binary" "$@"
    ;;
  *)
    usage
    ;;
esac
