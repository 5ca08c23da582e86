#!/usr/bin/env bash
# `pnpm check:package`: what users get from npm, checked the way they will meet it.
#   1. pnpm pack (prepack builds dist/esm + dist/commonjs with tshy) and list the tarball;
#   2. publint --strict and are-the-types-wrong on it (every resolution mode: node10,
#      node16 CJS/ESM, bundler);
#   3. npm publish --dry-run must print no warning;
#   4. TypeDoc must build the API reference without a warning, and the committed
#      packages/nest-leader/docs/api must equal what it builds (run `pnpm docs:api` after changing
#      a public symbol or its TSDoc).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pkg="$root/packages/nest-leader"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say() { echo "check:package: $*" >&2; }

cd "$pkg"
say "pnpm pack (tshy builds ESM + CommonJS, about 20 s)"
pnpm pack --pack-destination "$work" >/dev/null
tarball="$(ls "$work"/nest-leader-*.tgz)"
say "$(basename "$tarball"): $(du -k "$tarball" | cut -f1) KB packed, $(tar tzf "$tarball" | wc -l) files"
if tar tzf "$tarball" | grep -E '\.tsbuildinfo$|(^|/)src/package\.json$|\.tshy'; then
  say "the tarball holds build leftovers (listed above)"
  exit 1
fi

say "publint --strict"
pnpm exec publint --strict --pack false
say "are-the-types-wrong"
pnpm exec attw "$tarball"

say "npm publish --dry-run"
npm publish --dry-run --ignore-scripts >"$work/publish.log" 2>&1 || { cat "$work/publish.log"; exit 1; }
# Not about the package, so not counted: not being logged in (a dry run publishes nothing), and
# npm's notes on config it does not know (pnpm passes its own npm_config_* variables on).
if grep -v -e 'Unknown user config' -e 'Unknown env config' -e 'requires you to be logged in' \
  "$work/publish.log" |
  grep -i 'npm warn'; then
  say "npm publish --dry-run warned (above)"
  exit 1
fi

say "typedoc (warnings are errors) and docs/api up to date"
pnpm exec typedoc --out "$work/api" >"$work/typedoc.log" 2>&1 || { cat "$work/typedoc.log"; exit 1; }
if ! diff -r docs/api "$work/api" >"$work/docs.diff"; then
  head -40 "$work/docs.diff"
  say "docs/api is out of date: run 'pnpm docs:api' and commit packages/nest-leader/docs/api"
  exit 1
fi
say "ok"
