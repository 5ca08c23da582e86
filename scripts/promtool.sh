#!/usr/bin/env bash
# Builds and runs Prometheus' promtool (pinned in test/promtool/go.mod) for the alerting-rule tests.
#
#   scripts/promtool.sh build         build test/promtool/.bin/promtool unless it is up to date
#   scripts/promtool.sh run [args…]   build (cached), then exec promtool with the arguments
#
# Cached like scripts/control-plane.sh: rebuilt only when a hash of go.mod, go.sum, the Go version
# and the build flags differs from the stamp beside the binary. Built with the `remove_all_sd` tag
# (Prometheus' own switch, see its plugins/ directory) so the cloud service-discovery SDKs (AWS,
# Azure, GCE, …) that `promtool test rules` never uses are not compiled: that roughly halves a cold
# build. The Go module proxy serves every module this needs; nothing else is downloaded.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
module_dir="$repo_root/test/promtool"
bin_dir="$module_dir/.bin"
binary="$bin_dir/promtool"
stamp="$bin_dir/source.sha256"
tags="remove_all_sd"

log() { echo "promtool.sh: $*" >&2; }

usage() {
  sed -n '2,5s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 2
}

prometheus_version() {
  (cd "$module_dir" && go mod edit -json | sed -n '/"Path": "github.com\/prometheus\/prometheus"/{n;s/.*"Version": "\(v[^"]*\)".*/\1/p;q}')
}

ldflags() {
  # The module version v0.315.0 is Prometheus 3.15.0; promtool --version prints it.
  local module_version release
  module_version="$(prometheus_version)"
  if [[ ! "$module_version" =~ ^v0\.3([0-9]{2})\.([0-9]+)$ ]]; then
    log "cannot read the github.com/prometheus/prometheus version from go.mod (got '$module_version')"
    exit 1
  fi
  release="3.$((10#${BASH_REMATCH[1]})).${BASH_REMATCH[2]}"
  echo "-s -w -X github.com/prometheus/common/version.Version=$release"
}

source_hash() {
  local flags="$1"
  {
    (cd "$module_dir" && sha256sum go.mod go.sum)
    go env GOVERSION GOOS GOARCH CGO_ENABLED
    echo "$flags" "$tags"
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
  log "building $binary ($(prometheus_version); a cold build compiles Prometheus' rule engine and TSDB: a few minutes)"
  start=$(date +%s)
  # Progress: go build -v names each package as it compiles; print a count every 25, and pass
  # anything else (compiler errors) through.
  if ! (cd "$module_dir" && go build -v -buildvcs=false -tags "$tags" -ldflags "$flags" -o "$binary.tmp" github.com/prometheus/prometheus/cmd/promtool) 2>&1 |
    awk -v start="$start" '/^[^ #]+$/ { n++; if (n % 25 == 0) { printf "promtool.sh: compiled %d packages (%ds)\n", n, systime() - start; fflush() } next } { print; fflush() }' >&2; then
    log "build failed"
    exit 1
  fi
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
