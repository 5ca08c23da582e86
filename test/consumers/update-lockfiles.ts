/**
 * Regenerates the consumer apps' committed lockfiles (`test/consumers/lockfiles/`):
 * `node test/dist/consumers/update-lockfiles.js [flavor…]` after changing a range in
 * consumer-apps.ts. A full `npm install` in a scratch directory (not `--package-lock-only`,
 * which leaves platform-specific optional packages out of the lockfile and breaks `npm ci`).
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FLAVORS, packageJson } from './consumer-apps.js';
import { cacheDir, progress, repoRoot, run } from './consumer-workspace.js';

const wanted = process.argv.slice(2);
for (const flavor of FLAVORS.filter((f) => wanted.length === 0 || wanted.includes(f.name))) {
  const dir = mkdtempSync(join(tmpdir(), `nest-leader-lock-${flavor.name}-`));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(packageJson(flavor), null, 2)}\n`);
  progress(`npm install ${flavor.name} (about 1 min)…`);
  await run('npm', ['install', '--cache', join(cacheDir, 'npm-cache'), '--no-audit', '--no-fund'], {
    cwd: dir,
  });
  copyFileSync(
    join(dir, 'package-lock.json'),
    join(repoRoot, 'test/consumers/lockfiles', `${flavor.name}.package-lock.json`),
  );
  rmSync(dir, { recursive: true, force: true });
  progress(`${flavor.name}: lockfile updated`);
}
