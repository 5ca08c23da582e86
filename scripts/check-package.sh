#!/usr/bin/env bash
# `pnpm check:package`: what users get from npm, checked the way they will meet it.
#   1. pnpm pack (prepack builds dist/esm + dist/commonjs with tshy) and list the tarball;
#   2. publint --strict and are-the-types-wrong on it (every resolution mode: node10,
#      node16 CJS/ESM, bundler);
#   3. npm publish --dry-run must print no warning;
#   4. TypeDoc must build the API reference without a warning, and the committed
#      packages/nest-leader/docs/api must equal what it builds (run `pnpm docs:api` after changing
#      a public symbol or its TSDoc).
# Then the sidecar package, nest-leader-elector, the same way where it applies: pnpm pack (its
# dependency on nest-leader must become that version, its bin must be in the tarball with its
# shebang, no build leftover and no file without a source), publint --strict, npm publish
# --dry-run. It is a bin only — no `exports`, `main` or `types`: nothing imports it, the types an
# application needs to read the sidecar are in nest-leader/core — so are-the-types-wrong has no
# entry to check; the script fails if an entry appears, so that attw is added with it.
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
# The sidecar program is the nest-leader-elector package: the library ships no bin and none of it.
if tar tzf "$tarball" | grep -E '^package/dist/[^/]+/sidecar/'; then
  say "the tarball holds the sidecar program (listed above): it belongs to nest-leader-elector"
  exit 1
fi
if tar xzf "$tarball" -O package/package.json | grep -q '"bin"'; then
  say "the library's package.json has a bin: the sidecar's bin belongs to nest-leader-elector"
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

elector="$root/packages/nest-leader-elector"
cd "$elector"
say "nest-leader-elector: pnpm pack"
pnpm pack --pack-destination "$work" >/dev/null
etarball="$(ls "$work"/nest-leader-elector-*.tgz)"
say "$(basename "$etarball"): $(du -k "$etarball" | cut -f1) KB packed, $(tar tzf "$etarball" | wc -l) files"
tar tzf "$etarball" | sort >"$work/elector-files"
if grep -vE '^package/(package\.json|README\.md|CHANGELOG\.md|LICENSE|dist/[a-z.-]+\.js)$' "$work/elector-files"; then
  say "nest-leader-elector's tarball holds files it should not (listed above)"
  exit 1
fi
for js in $(sed -n 's|^package/dist/\(.*\)\.js$|\1|p' "$work/elector-files"); do
  [ -f "src/$js.ts" ] || { say "dist/$js.js has no source (src/$js.ts): a stale build output"; exit 1; }
done
mkdir "$work/elector" && tar xzf "$etarball" -C "$work/elector"
node --input-type=module - "$work/elector/package" "$pkg/package.json" <<'JS'
import { readFileSync } from 'node:fs';
const [dir, libraryManifest] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(`${dir}/package.json`, 'utf8'));
const library = JSON.parse(readFileSync(libraryManifest, 'utf8'));
const fail = (message) => {
  console.error(`check:package: nest-leader-elector: ${message}`);
  process.exit(1);
};
if (manifest.dependencies?.['nest-leader'] !== library.version) {
  fail(`depends on nest-leader ${manifest.dependencies?.['nest-leader']}, not ${library.version}`);
}
for (const field of ['exports', 'main', 'module', 'types', 'typings']) {
  if (field in manifest) fail(`has "${field}": check its types with attw (scripts/check-package.sh)`);
}
const bin = manifest.bin?.['nest-leader-elector'];
if (!bin) fail('has no bin nest-leader-elector');
if (!readFileSync(`${dir}/${bin}`, 'utf8').startsWith('#!/usr/bin/env node\n')) {
  fail(`${bin} does not start with #!/usr/bin/env node`);
}
JS
say "nest-leader-elector: publint --strict (on the tarball)"
(cd "$pkg" && pnpm exec publint run --strict "$etarball")
say "nest-leader-elector: npm publish --dry-run"
npm publish --dry-run --ignore-scripts "$etarball" >"$work/elector-publish.log" 2>&1 || {
  cat "$work/elector-publish.log"
  exit 1
}
if grep -v -e 'Unknown user config' -e 'Unknown env config' -e 'requires you to be logged in' \
  "$work/elector-publish.log" |
  grep -i 'npm warn'; then
  say "npm publish --dry-run of nest-leader-elector warned (above)"
  exit 1
fi
say "ok"
