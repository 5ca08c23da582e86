# shellcheck shell=bash
# Build-and-cache for the Go programs the tests run, built from the Go module proxy into their
# module's .bin/ (scripts/control-plane.sh, client-go-candidate.sh, toxiproxy.sh, promtool.sh
# source this file). A binary is rebuilt only when a hash of go.mod, go.sum (and the module's
# own *.go files, for programs of ours), the Go version, the link flags and the build tags
# differs from the stamp beside it (.bin/source.sha256). Go's default module and build caches
# are used. While it builds, a progress line every 25 compiled packages (go build -v) and every
# 30 s; compiler messages pass through.
#
# The sourcing script sets, then calls `go_tool_main "$@"`:
#   GO_TOOL_NAME          its name in log lines, e.g. "promtool.sh"
#   GO_TOOL_MODULE        the Go module's directory
#   GO_TOOL_BINARY        the binary's file name in $GO_TOOL_MODULE/.bin
#   GO_TOOL_PACKAGE       what to build: "." or an import path
#   GO_TOOL_ABOUT         what the first line of a build says (what, and how long it takes)
#   GO_TOOL_TAGS          build tags (optional)
#   GO_TOOL_HASH_SOURCES  1: the module's *.go files are part of the hash (optional)
#   GO_TOOL_PRINT_PATH    1: `build` prints the binary's path on stdout (optional)
# and may define go_tool_ldflags (prints -ldflags; default "-s -w": no symbol table or DWARF).

go_tool_bin_dir() { echo "$GO_TOOL_MODULE/.bin"; }
go_tool_binary() { echo "$GO_TOOL_MODULE/.bin/$GO_TOOL_BINARY"; }

go_tool_log() { echo "$GO_TOOL_NAME: $*" >&2; }

# The commands of the sourcing script: its header comment from "#   scripts/…" to a bare "#".
go_tool_usage() {
  awk '/^#   scripts\//{on=1} on && /^#$/{exit} on{sub(/^# ?/, ""); print}' "$0" >&2
  exit 2
}

if ! declare -F go_tool_ldflags >/dev/null; then
  go_tool_ldflags() { echo "-s -w"; }
fi

# The version of module $1 that go.mod in $GO_TOOL_MODULE requires (read from go.mod alone:
# no module graph, no network).
go_tool_module_version() {
  (cd "$GO_TOOL_MODULE" && go mod edit -json) | awk -v want="\"Path\": \"$1\"" '
    index($0, want) { getline; if (match($0, /"Version": "[^"]*"/)) print substr($0, RSTART + 12, RLENGTH - 13); exit }'
}

go_tool_source_hash() {
  local flags="$1"
  {
    if [[ "${GO_TOOL_HASH_SOURCES:-}" == 1 ]]; then
      (cd "$GO_TOOL_MODULE" && find . -path ./.bin -prune -o -path ./.state -prune -o -type f \
        \( -name '*.go' -o -name go.mod -o -name go.sum \) -print | LC_ALL=C sort | xargs sha256sum)
    else
      (cd "$GO_TOOL_MODULE" && sha256sum go.mod go.sum)
    fi
    go env GOVERSION GOOS GOARCH CGO_ENABLED
    echo "$flags" "${GO_TOOL_TAGS:-}"
  } | sha256sum | cut -d' ' -f1
}

# One build of a program at a time: a second caller (CI's background build, and a test that
# needs the program now) waits for the first, then finds the binary up to date. The lock is
# closed before `run` execs the program, which must not hold it.
go_tool_build() {
  local lock_fd
  mkdir -p "$(go_tool_bin_dir)"
  exec {lock_fd}>"$(go_tool_bin_dir)/.build.lock"
  if ! flock -n "$lock_fd"; then
    go_tool_log "waiting for another build of $(go_tool_binary) to finish"
    flock "$lock_fd"
  fi
  go_tool_build_unlocked # a failure exits the script, which releases the lock
  exec {lock_fd}>&-
}

go_tool_build_unlocked() {
  local flags hash start packages=0 line status="" ticker binary stamp
  binary="$(go_tool_binary)"
  stamp="$(go_tool_bin_dir)/source.sha256"
  flags="$(go_tool_ldflags)"
  hash="$(go_tool_source_hash "$flags")"
  if [[ -x "$binary" && -f "$stamp" && "$(cat "$stamp")" == "$hash" ]]; then
    go_tool_log "up to date: $binary"
    return 0
  fi
  go_tool_log "building $binary with $(go version | cut -d' ' -f3): $GO_TOOL_ABOUT"
  start=$(date +%s)
  # go build is silent while it downloads modules and links: say every 30 s that it is at it.
  (while sleep 30; do go_tool_log "still building: $(($(date +%s) - start)) s so far"; done) &
  ticker=$!
  while IFS= read -r line; do
    if [[ "$line" == exit:* ]]; then
      status="${line#exit:}"
    elif [[ "$line" == *" "* || "$line" == *:* ]]; then
      echo "$line" >&2 # a compiler or download message, not a package path
    else
      packages=$((packages + 1))
      if ((packages % 25 == 0)); then
        go_tool_log "… $packages packages compiled ($(($(date +%s) - start)) s)"
      fi
    fi
  done < <(cd "$GO_TOOL_MODULE" && go build -v -buildvcs=false -tags "${GO_TOOL_TAGS:-}" \
    -ldflags "$flags" -o "$binary.tmp" "$GO_TOOL_PACKAGE" 2>&1; echo "exit:$?")
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  if [[ "$status" != 0 ]]; then
    rm -f "$binary.tmp"
    go_tool_log "go build failed after $(($(date +%s) - start)) s"
    exit 1
  fi
  mv "$binary.tmp" "$binary"
  echo "$hash" >"$stamp"
  go_tool_log "built in $(($(date +%s) - start)) s ($packages packages compiled): $binary"
}

go_tool_main() {
  case "${1:-}" in
    build)
      shift
      [[ $# -eq 0 ]] || go_tool_usage
      go_tool_build
      if [[ "${GO_TOOL_PRINT_PATH:-}" == 1 ]]; then go_tool_binary; fi
      ;;
    run)
      shift
      go_tool_build
      exec "$(go_tool_binary)" "$@"
      ;;
    *)
      go_tool_usage
      ;;
  esac
}
