#!/usr/bin/env bash
# Builds and runs Prometheus' promtool (pinned in test/promtool/go.mod) for the alerting-rule tests.
#
#   scripts/promtool.sh build         build test/promtool/.bin/promtool unless it is up to date
#   scripts/promtool.sh run [args…]   build (cached), then exec promtool with the arguments
#
# Built and cached by scripts/lib/go-tool.sh. Built with the `remove_all_sd` tag (Prometheus' own
# switch, see its plugins/ directory) so the cloud service-discovery SDKs (AWS, Azure, GCE, …)
# that `promtool test rules` never uses are not compiled: that roughly halves a cold build. The
# Go module proxy serves every module this needs; nothing else is downloaded.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
GO_TOOL_NAME=promtool.sh
GO_TOOL_MODULE="$repo_root/test/promtool"
GO_TOOL_BINARY=promtool
GO_TOOL_PACKAGE=github.com/prometheus/prometheus/cmd/promtool
GO_TOOL_TAGS=remove_all_sd
GO_TOOL_ABOUT="a cold build compiles Prometheus' rule engine and TSDB: a few minutes"

# The module version v0.315.0 is Prometheus 3.15.0; promtool --version prints it.
go_tool_ldflags() {
  local module_version
  module_version="$(go_tool_module_version github.com/prometheus/prometheus)"
  if [[ ! "$module_version" =~ ^v0\.3([0-9]{2})\.([0-9]+)$ ]]; then
    go_tool_log "cannot read the github.com/prometheus/prometheus version from go.mod (got '$module_version')"
    exit 1
  fi
  echo "-s -w -X github.com/prometheus/common/version.Version=3.$((10#${BASH_REMATCH[1]})).${BASH_REMATCH[2]}"
}

# shellcheck source=lib/go-tool.sh
source "$repo_root/scripts/lib/go-tool.sh"
go_tool_main "$@"
