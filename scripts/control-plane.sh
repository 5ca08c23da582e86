#!/usr/bin/env bash
# Builds and runs the in-process kube-apiserver + etcd from test/control-plane.
#
#   scripts/control-plane.sh build         build .bin/control-plane unless it is up to date
#   scripts/control-plane.sh run [args…]   build (cached), then exec it in the foreground
#                                          (args: see 'run -help'; '-- …' passes flags to kube-apiserver)
#
# The binary is rebuilt only when a hash of the Go sources, go.mod, go.sum, the Go version and
# the link flags differs from the stamp beside it (.bin/source.sha256). The default Go build and
# module caches are used, so a rebuild after a small change takes seconds; a cold build compiles
# most of Kubernetes and takes minutes.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="$repo_root/test/control-plane"
bin_dir="$module_dir/.bin"
binary="$bin_dir/control-plane"
stamp="$bin_dir/source.sha256"

log() { echo "control-plane.sh: $*" >&2; }

usage() {
  sed -n '2,6s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

# Kubernetes' version variables, as its own release builds set them, so /version reports the
# release instead of v0.0.0-master.
ldflags() {
  local version major minor
  version="$(cd "$module_dir" && go mod edit -json | sed -n '/"Path": "k8s.io\/kubernetes"/{n;s/.*"Version": "\(v[^"]*\)".*/\1/p;q}')"
  if [[ ! "$version" =~ ^v([0-9]+)\.([0-9]+)\. ]]; then
    log "cannot read the k8s.io/kubernetes version from go.mod (got '$version')"
    exit 1
  fi
  major="${BASH_REMATCH[1]}"
  minor="${BASH_REMATCH[2]}"
  # -s -w: no symbol table or DWARF (stack traces keep names): a third smaller, links faster.
  local flags=(-s -w) pkg
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    flags+=("-X $pkg.gitVersion=$version" "-X $pkg.gitMajor=$major" "-X $pkg.gitMinor=$minor" "-X $pkg.gitTreeState=clean")
  done
  echo "${flags[*]}"
}

source_hash() {
  local flags="$1"
  {
    (cd "$module_dir" && find . -path ./.bin -prune -o -path ./.state -prune -o -type f \( -name '*.go' -o -name go.mod -o -name go.sum \) -print | LC_ALL=C sort | xargs sha256sum)
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
  log "building $binary with $(go version | cut -d' ' -f3): the first build on a machine downloads" \
    "the Go modules (about 565 MB, 15 s) and compiles most of Kubernetes (about 6 min on 2 cores," \
    "up to 9 under load); later builds take seconds, and the binary is cached until the Go sources change"
  start=$(date +%s)
  # go build prints nothing while it compiles: say every 30 s that it is still at it.
  (while sleep 30; do log "still building the control plane: $(($(date +%s) - start)) s so far (a cold build usually takes 5-9 min)"; done) &
  local ticker=$!
  if ! (cd "$module_dir" && go build -buildvcs=false -ldflags "$flags" -o "$binary.tmp" .); then
    kill "$ticker" 2>/dev/null || true
    log "go build failed after $(($(date +%s) - start)) s"
    exit 1
  fi
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
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
