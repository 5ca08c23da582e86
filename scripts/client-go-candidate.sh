#!/usr/bin/env bash
# Builds and runs test/client-go-candidate: client-go's own leader election (tools/leaderelection
# + resourcelock.LeaseLock, k8s.io/client-go at the control plane's Kubernetes version).
#
#   scripts/client-go-candidate.sh build         build .bin/client-go-candidate unless it is up to date;
#                                                prints the binary's path on stdout
#   scripts/client-go-candidate.sh run [args…]   build (cached), then exec it (args: see 'run -help')
#
# Built and cached by scripts/lib/go-tool.sh (the hash covers the Go sources too). The client-go
# packages are the ones the control plane compiles, so with its cache warm a build takes seconds.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GO_TOOL_NAME=client-go-candidate.sh
GO_TOOL_MODULE="$repo_root/test/client-go-candidate"
GO_TOOL_BINARY=client-go-candidate
GO_TOOL_PACKAGE=.
GO_TOOL_HASH_SOURCES=1
GO_TOOL_PRINT_PATH=1
GO_TOOL_ABOUT="seconds with a warm Go build cache; a cold one compiles client-go: minutes"

# shellcheck source=lib/go-tool.sh
source "$repo_root/scripts/lib/go-tool.sh"
go_tool_main "$@"
