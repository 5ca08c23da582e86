#!/usr/bin/env bash
# Builds and runs test/client-go-candidate: client-go's own leader election (tools/leaderelection
# + resourcelock.LeaseLock, k8s.io/client-go at the control plane's Kubernetes version).
#
#   scripts/client-go-candidate.sh build         build .bin/client-go-candidate unless it is up to date;
#                                                prints the binary's path on stdout
#   scripts/client-go-candidate.sh run [args…]   build (cached), then exec it (args: see 'run -help')
#
# Cached like scripts/control-plane.sh: rebuilt only when a hash of the Go sources, go.mod, go.sum
# and the Go version differs from the stamp beside the binary (.bin/source.sha256). Uses the default
# Go build and module caches; the client-go packages are the ones the control plane compiles too, so
# with its cache warm a build takes seconds. Progress lines go to stderr while it builds.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="$repo_root/test/client-go-candidate"
bin_dir="$module_dir/.bin"
binary="$bin_dir/client-go-candidate"
stamp="$bin_dir/source.sha256"

log() { echo "client-go-candidate.sh: $*" >&2; }

usage() {
  sed -n '2,7s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

source_hash() {
  {
    (cd "$module_dir" && find . -path ./.bin -prune -o -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print | LC_ALL=C sort | xargs sha256sum)
    go env GOVERSION GOOS GOARCH CGO_ENABLED
  } | sha256sum | cut -d' ' -f1
}

build() {
  local hash start packages=0 line status=""
  hash="$(source_hash)"
  if [[ -x "$binary" && -f "$stamp" && "$(cat "$stamp")" == "$hash" ]]; then
    log "up to date: $binary"
    return 0
  fi
  mkdir -p "$bin_dir"
  log "building $binary (seconds with a warm Go build cache; a cold one compiles client-go: minutes)"
  start=$(date +%s)
  # -v names each package as it is compiled: one progress line per 20 packages.
  while IFS= read -r line; do
    if [[ "$line" == exit:* ]]; then
      status="${line#exit:}"
    elif [[ "$line" == *" "* || "$line" == *:* ]]; then
      echo "$line" >&2 # a compiler message, not a package path
    else
      packages=$((packages + 1))
      if ((packages % 20 == 0)); then log "… $packages packages compiled ($(($(date +%s) - start)) s)"; fi
    fi
  done < <(cd "$module_dir" && go build -buildvcs=false -v -ldflags '-s -w' -o "$binary.tmp" . 2>&1; echo "exit:$?")
  if [[ "$status" != 0 ]]; then
    rm -f "$binary.tmp"
    log "build failed"
    exit 1
  fi
  mv "$binary.tmp" "$binary"
  echo "$hash" > "$stamp"
  log "built in $(($(date +%s) - start)) s ($packages packages compiled): $binary"
}

cmd="${1:-}"
case "$cmd" in
  build)
    shift
    [[ $# -eq 0 ]] || usage
    build
    echo "$binary"
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
