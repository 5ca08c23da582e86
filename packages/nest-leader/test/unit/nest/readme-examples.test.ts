import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

// build/test/unit/nest → the package root
const packageRoot = new URL('../../../../', import.meta.url);
/** The README and the docs pages beside the API reference (docs/*.md). */
const pages = [
  'README.md',
  ...readdirSync(new URL('docs/', packageRoot))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const quoted = pages.flatMap((page) =>
  [
    ...readFileSync(new URL(page, packageRoot), 'utf8').matchAll(
      /<!-- (examples\/[\w.-]+) -->\n```ts\n([\s\S]*?)\n```/g,
    ),
  ].map(([, path, code]) => ({ page, path: path!, code: code! })),
);

test('every code block quoting an example file in the README or docs matches the file', () => {
  assert.ok(quoted.length > 0);
  for (const { page, path, code } of quoted) {
    const file = readFileSync(new URL(path, packageRoot), 'utf8').trimEnd();
    assert.equal(code, file, `${path} differs from its quote in ${page}`);
  }
});

test('every example file is quoted in the README or a docs page', () => {
  const files = readdirSync(new URL('examples/', packageRoot)).filter((name) =>
    name.endsWith('.ts'),
  );
  const quotedPaths = new Set(quoted.map(({ path }) => path));
  assert.deepEqual(
    files.filter((name) => !quotedPaths.has(`examples/${name}`)),
    [],
  );
});
