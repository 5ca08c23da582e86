import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

// build/test/unit → the package root, and the repository root above it
const packageRoot = new URL('../../../', import.meta.url);
const repoRoot = new URL('../../', packageRoot);
const readme = readFileSync(new URL('README.md', packageRoot), 'utf8');
const manifest = JSON.parse(readFileSync(new URL('package.json', packageRoot), 'utf8')) as {
  repository: { url: string };
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const repository = manifest.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');

/** The package names of every `npm install` line in one fenced block of the Install section. */
function installBlocks(): string[][] {
  const section = readme.slice(
    readme.indexOf('## Install\n'),
    readme.indexOf('\n## ', readme.indexOf('## Install\n') + 1),
  );
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map(([, block]) =>
    [...block!.matchAll(/^npm install (.+)$/gm)].flatMap(([, args]) =>
      args!.split(/\s+/).map((spec) => spec.replace(/(.)@[^@]*$/, '$1')),
    ),
  );
}

test('README links work on npm: no relative links; repository links name files that exist', () => {
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map(([, target]) => target!);
  assert.ok(links.length > 0);
  for (const link of links) {
    if (link.startsWith('#')) continue;
    assert.match(link, /^https:\/\//, `relative link ${link} is dead on npm`);
    if (!link.startsWith(`${repository}/`)) continue;
    const path = link.slice(repository.length).replace(/^\/(tree|blob)\/main\//, '');
    assert.ok(existsSync(new URL(path, repoRoot)), `${link}: ${path} does not exist`);
  }
});

test('README Install names every required peer, @nestjs/schedule and the quick start imports', () => {
  const blocks = installBlocks();
  assert.equal(blocks.length, 2, 'one Install block for Nest 12, one for Nest 11');
  const required = Object.keys(manifest.peerDependencies).filter(
    (name) => !manifest.peerDependenciesMeta[name]?.optional,
  );
  // What `nest new` already installs.
  const starter = new Set(['@nestjs/common', '@nestjs/core', 'reflect-metadata', 'rxjs']);
  const quickStartImports = ['quick-start.ts', 'main.ts'].flatMap((file) =>
    [
      ...readFileSync(new URL(`examples/${file}`, packageRoot), 'utf8').matchAll(
        /from '([^.'][^']*)'|^import '([^.'][^']*)'/gm,
      ),
    ].map(([, from, bare]) => (from ?? bare)!.replace(/^(@[^/]+\/[^/]+|[^@/][^/]*).*$/, '$1')),
  );
  for (const installed of blocks) {
    for (const name of [...required, '@nestjs/schedule', ...quickStartImports]) {
      if (name === 'nest-leader') continue;
      assert.ok(
        installed.includes(name) || starter.has(name),
        `${name} is missing from README Install (${installed.join(' ')})`,
      );
    }
    assert.ok(installed.includes('nest-leader'));
  }
});
