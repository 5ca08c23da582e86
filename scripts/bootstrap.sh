#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: the pinned Node 24 + pnpm (from the npm
# registry, into tools/node_modules) and the workspace's JS dependencies.
# Re-runs are cheap: each step is skipped while its lockfile is unchanged.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="$root/tools"

stamp_ok() { [ -f "$2" ] && [ "$(cat "$2")" = "$(sha256sum "$1" | cut -d' ' -f1)" ]; }
write_stamp() { sha256sum "$1" | cut -d' ' -f1 >"$2"; }

if ! stamp_ok "$tools/package-lock.json" "$tools/node_modules/.bootstrap-stamp" \
  || ! "$tools/node_modules/.bin/node" --version >/dev/null 2>&1; then
  echo "bootstrap: installing Node 24 and pnpm into tools/ (npm registry)" >&2
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >&2)
  write_stamp "$tools/package-lock.json" "$tools/node_modules/.bootstrap-stamp"
fi
export PATH="$tools/node_modules/.bin:$PATH"

if ! stamp_ok "$root/pnpm-lock.yaml" "$root/node_modules/.bootstrap-stamp"; then
  echo "bootstrap: installing workspace dependencies (pnpm, frozen lockfile)" >&2
  (cd "$root" && CI=true pnpm install --frozen-lockfile --reporter=append-only >&2)
  write_stamp "$root/pnpm-lock.yaml" "$root/node_modules/.bootstrap-stamp"
fi
