/**
 * The consumer matrix installs what the library README's Install section tells users to, for
 * each Nest line: the same packages, and the same major where the README names one. So a
 * green matrix means the Install commands work verbatim.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { type NestLine, README_INSTALL } from './consumer-apps.js';
import { repoRoot } from './consumer-workspace.js';

const readme = readFileSync(join(repoRoot, 'packages/nest-leader/README.md'), 'utf8');

/** `{ package: major or undefined }` of every `npm install` line in each sh block of Install. */
function installBlocks(): Map<string, string | undefined>[] {
  const start = readme.indexOf('## Install\n');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map(
    ([, block]) =>
      new Map(
        [...block!.matchAll(/^npm install (.+)$/gm)].flatMap(([, args]) =>
          args!.split(/\s+/).map((spec) => {
            const match = /^(@?[^@]+)(?:@\^?(\d+))?/.exec(spec)!;
            return [match[1]!, match[2]] as [string, string | undefined];
          }),
        ),
      ),
  );
}

test('the matrix apps install exactly the README Install packages of their Nest line', () => {
  const blocks = installBlocks();
  const byLine: Record<NestLine, Map<string, string | undefined>> = {
    12: blocks[0]!,
    11: blocks[1]!,
  };
  for (const line of [11, 12] as const) {
    const readmePackages = byLine[line];
    readmePackages.delete('nest-leader'); // the matrix installs the packed tarball instead
    assert.deepEqual(
      [...readmePackages.keys()].sort(),
      Object.keys(README_INSTALL[line]).sort(),
      `Nest ${line}`,
    );
    for (const [name, major] of readmePackages) {
      if (major === undefined) continue;
      assert.equal(
        /^[\^~]?(\d+)/.exec(README_INSTALL[line][name]!)![1],
        major,
        `Nest ${line}: ${name}@^${major} in the README`,
      );
    }
  }
});
