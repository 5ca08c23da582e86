import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { test } from 'node:test';

// build/test → the package root, and the repository root above it
const packageRoot = new URL('../../', import.meta.url);
const repoRoot = new URL('../../', packageRoot);
const readme = readFileSync(new URL('README.md', packageRoot), 'utf8');
const src = new URL('src/', packageRoot);

/** The README's Layout table: each row's first cell (its rooms, in backticks) and whole text. */
function layoutRows(text: string): { rooms: string[]; row: string }[] {
  const start = text.indexOf('\n## Layout\n');
  assert.ok(start >= 0, 'the README has a Layout section');
  const end = text.indexOf('\n## ', start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((row) => ({
      rooms: [...row.split(' | ')[0]!.matchAll(/`([^`]+)`/g)].map(([, room]) => room!),
      row,
    }));
}

/** What of `src/` the Layout must name: its files and folders, and those of core/ and locks/. */
function tree(): { files: string[]; rooms: string[]; nestFolders: string[] } {
  const entries = (path: string) => readdirSync(new URL(path, src), { withFileTypes: true });
  const folders = (path: string) =>
    entries(path)
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${path}${entry.name}/`);
  return {
    files: entries('')
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name),
    rooms: [...folders(''), ...folders('core/'), ...folders('locks/')],
    nestFolders: folders('nest/').map((folder) => folder.slice('nest/'.length)),
  };
}

/** How the Layout rows and the rooms of the import rules differ from the tree (none: agreed). */
function layoutProblems(rows: { rooms: string[]; row: string }[], ruleRooms: string[]): string[] {
  const { files, rooms, nestFolders } = tree();
  const named = new Set(rows.flatMap((row) => row.rooms));
  const problems: string[] = [];
  for (const name of [...files, ...rooms]) {
    if (!named.has(name)) problems.push(`src/${name} has no row`);
  }
  const nestRow = rows.find((row) => row.rooms.includes('nest/'))?.row ?? '';
  for (const folder of nestFolders) {
    if (!nestRow.includes(`\`${folder}\``)) problems.push(`the nest/ row does not name ${folder}`);
  }
  const onDisk = new Set([...files, ...rooms, 'locks/lock-selection.ts']);
  for (const name of named) {
    if (!onDisk.has(name)) problems.push(`row ${name}: no such file or folder in src/`);
  }
  const rowRooms = rows.map((row) => row.rooms[0]!).filter((room) => room.endsWith('/'));
  for (const room of rowRooms) {
    if (!ruleRooms.some((rule) => rule.startsWith(room)))
      problems.push(`room ${room}: no import rule`);
  }
  for (const rule of ruleRooms) {
    const room = rule.split(' ')[0]!;
    if (!named.has(room)) problems.push(`import rule of ${room}: no row`);
  }
  return problems;
}

/** The rooms of the `room …` rules in .dependency-cruiser.cjs (`nest/`, `core/ (root)` …). */
function ruleRooms(): string[] {
  const require = createRequire(import.meta.url);
  const config = require(new URL('.dependency-cruiser.cjs', repoRoot).pathname) as {
    forbidden: { name: string }[];
  };
  return config.forbidden
    .filter((rule) => rule.name.startsWith('room '))
    .map((rule) => rule.name.slice('room '.length));
}

test('the README Layout is the tree: a row for every folder and top file of src/, each with its import rule', () => {
  const rules = ruleRooms();
  assert.ok(rules.length >= 10, `room rules found: ${rules.join(', ')}`);
  assert.deepEqual(layoutProblems(layoutRows(readme), rules), []);
});

test('positive control: a Layout without a room, or naming a folder that does not exist, is told', () => {
  const rules = ruleRooms();
  const withoutHandoff = readme.replace(/^\| `core\/handoff\/` .*\n/m, '');
  assert.notEqual(withoutHandoff, readme);
  assert.deepEqual(layoutProblems(layoutRows(withoutHandoff), rules), [
    'src/core/handoff/ has no row',
    'import rule of core/handoff/: no row',
  ]);
  const withGhost = readme.replace(/^\| `peers\/` \|/m, '| `ghosts/` | nothing |\n| `peers/` |');
  assert.notEqual(withGhost, readme);
  assert.deepEqual(layoutProblems(layoutRows(withGhost), rules), [
    'row ghosts/: no such file or folder in src/',
    'room ghosts/: no import rule',
  ]);
});
