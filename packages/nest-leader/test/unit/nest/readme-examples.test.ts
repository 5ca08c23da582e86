import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

// build/test/unit/nest → the package root
const packageRoot = new URL('../../../../', import.meta.url);
const readme = readFileSync(new URL('README.md', packageRoot), 'utf8');
const quoted = [...readme.matchAll(/<!-- (examples\/[\w.-]+) -->\n```ts\n([\s\S]*?)\n```/g)];

test('every code block quoting an example file in the README matches the file', () => {
  assert.ok(quoted.length > 0);
  for (const [, path, code] of quoted) {
    const file = readFileSync(new URL(path!, packageRoot), 'utf8').trimEnd();
    assert.equal(code, file, `${path} differs from its quote in README.md`);
  }
});

test('every example file is quoted in the README', () => {
  const files = readdirSync(new URL('examples/', packageRoot)).filter((name) =>
    name.endsWith('.ts'),
  );
  const quotedPaths = new Set(quoted.map(([, path]) => path));
  assert.deepEqual(
    files.filter((name) => !quotedPaths.has(`examples/${name}`)),
    [],
  );
});
