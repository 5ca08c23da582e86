#!/usr/bin/env bash
# Builds and runs the in-process kube-apiserver + etcd from test/control-plane.
#
#   scripts/control-plane.sh build         build .bin/control-plane unless it is up to date
#   scripts/control-plane.sh run [args…]   build (cached), then exec it in the foreground
#                                          (args: see 'run -help'; '-- …' passes flags to kube-apiserver)
#
# Built and cached by scripts/lib/go-tool.sh (the hash covers the Go sources too), so a rebuild
# after a small change takes seconds; a cold build compiles most of Kubernetes and takes minutes.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GO_TOOL_NAME=control-plane.sh
GO_TOOL_MODULE="$repo_root/test/control-plane"
GO_TOOL_BINARY=control-plane
GO_TOOL_PACKAGE=.
GO_TOOL_HASH_SOURCES=1
GO_TOOL_ABOUT="the first build on a machine downloads the Go modules (about 565 MB, 15 s) and \
compiles most of Kubernetes (about 6 min on 2 cores, up to 9 under load); later builds take \
seconds, and the binary is cached until the Go sources change"

# Kubernetes' version variables, as its own release builds set them, so /version reports the
# release instead of v0.0.0-master.
go_tool_ldflags() {
  local version major minor flags=(-s -w) pkg
  version="$(go_tool_module_version k8s.io/kubernetes)"
  if [[ ! "$version" =~ ^v([0-9]+)\.([0-9]+)\. ]]; then
    go_tool_log "cannot read the k8s.io/kubernetes version from go.mod (got '$version')"
    exit 1
  fi
  major="${BASH_REMATCH[1]}"
  minor="${BASH_REMATCH[2]}"
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    flags+=("-X $pkg.gitVersion=$version" "-X $pkg.gitMajor=$major" "-X $pkg.gitMinor=$minor" "-X $pkg.gitTreeState=clean")
  done
  echo "${flags[*]}"
}

# shellcheck source=lib/go-tool.sh
source "$repo_root/scripts/lib/go-tool.sh"
go_tool_main "$@"
