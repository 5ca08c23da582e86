import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// build/test → the package root, and the repository root above it
const packageRoot = new URL('../../', import.meta.url);
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
  const quickStartImports = ['app.module.ts', 'health.module.ts', 'main.ts'].flatMap((file) =>
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

/** GitHub's anchors of a Markdown file's headings (outside code blocks), as it renders them. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}_\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

test('READMEs and docs pages: every link to a file of the repository, and every anchor, resolves', () => {
  const pages = [
    new URL('README.md', packageRoot),
    ...readdirSync(new URL('docs/', packageRoot))
      .filter((name) => name.endsWith('.md'))
      .map((name) => new URL(`docs/${name}`, packageRoot)),
    new URL('README.md', repoRoot),
    new URL('apps/demo/README.md', repoRoot),
    new URL('packages/nest-leader-elector/README.md', repoRoot),
  ];
  let checked = 0;
  for (const pageUrl of pages) {
    const page = fileURLToPath(pageUrl).slice(fileURLToPath(repoRoot).length);
    const text = readFileSync(pageUrl, 'utf8');
    for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      let target: URL;
      if (link!.startsWith(`${repository}/`)) {
        const path = link!.slice(repository.length).replace(/^\/(tree|blob)\/main\//, '');
        target = new URL(path, repoRoot);
      } else if (/^[a-z]+:/.test(link!)) continue;
      else target = new URL(link!, pageUrl);
      const file = fileURLToPath(new URL(target.pathname, target));
      assert.ok(existsSync(file), `${page}: ${link} names ${file}, which does not exist`);
      const anchor = decodeURIComponent(target.hash.slice(1));
      if (anchor) {
        assert.ok(
          anchorsOf(readFileSync(file, 'utf8')).has(anchor),
          `${page}: ${link}: no heading with the anchor #${anchor}`,
        );
      }
      checked += 1;
    }
  }
  assert.ok(checked > 100, `only ${checked} links checked`);
});
