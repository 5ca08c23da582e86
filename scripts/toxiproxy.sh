#!/usr/bin/env bash
# Builds toxiproxy-server (Shopify/toxiproxy, the TCP fault proxy of the chaos harness) from the
# Go module proxy, at the version pinned in test/toxiproxy/go.mod, into test/toxiproxy/.bin/.
#
#   scripts/toxiproxy.sh build         build .bin/toxiproxy-server unless it is up to date
#   scripts/toxiproxy.sh run [args…]   build (cached), then exec it in the foreground
#
# Built and cached by scripts/lib/go-tool.sh.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GO_TOOL_NAME=toxiproxy.sh
GO_TOOL_MODULE="$repo_root/test/toxiproxy"
GO_TOOL_BINARY=toxiproxy-server
GO_TOOL_PACKAGE=github.com/Shopify/toxiproxy/v2/cmd/server
GO_TOOL_ABOUT="a cold build takes about 2.5 min, a few seconds with a warm Go build cache"

# The module version from go.mod, so `toxiproxy-server -version` reports it instead of "git".
go_tool_ldflags() {
  echo "-s -w -X github.com/Shopify/toxiproxy/v2.Version=$(go_tool_module_version github.com/Shopify/toxiproxy/v2)"
}

# shellcheck source=lib/go-tool.sh
source "$repo_root/scripts/lib/go-tool.sh"
go_tool_main "$@"
