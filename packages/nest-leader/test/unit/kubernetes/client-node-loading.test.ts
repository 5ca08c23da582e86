import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

/**
 * Runs `body` in a fresh Node process that records every module it loads (a `registerHooks`
 * resolve hook) and answers whether `@kubernetes/client-node` was among them.
 */
function loadsClientNode(body: string): boolean {
  const script = `
    import { registerHooks } from 'node:module';
    const loaded = [];
    registerHooks({ resolve: (specifier, context, next) => {
      const result = next(specifier, context);
      loaded.push(result.url);
      return result;
    } });
    const { selectLock } = await import('nest-leader/core');
    ${body}
    console.log(JSON.stringify(loaded.some((url) => url.includes('/@kubernetes/client-node/'))));
  `;
  const cwd = fileURLToPath(new URL('.', import.meta.url));
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd,
    env: { ...process.env, KUBECONFIG: '', HOME: mkdtempSync(join(tmpdir(), 'nest-leader-home-')) },
    encoding: 'utf8',
  });
  return JSON.parse(output.trim().split('\n').at(-1)!) as boolean;
}

describe('@kubernetes/client-node is loaded only for Kubernetes Leases', () => {
  test('importing nest-leader and electing on a file or memory lock never loads it', () => {
    assert.equal(
      loadsClientNode(`
        selectLock({ leaseName: 'a', lock: 'memory' });
        selectLock({ leaseName: 'a', lock: 'file' });
        selectLock({ leaseName: 'a' }); // 'auto' with no configuration: a file lock
      `),
      false,
    );
  });

  test('a Lease loads it (the probe can see it)', () => {
    const kubeconfig = join(mkdtempSync(join(tmpdir(), 'nest-leader-kc-')), 'config');
    writeFileSync(
      kubeconfig,
      [
        'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
        'users: [{ name: u, user: { token: t } }]',
        'contexts: [{ name: x, context: { cluster: c, user: u } }]',
        'current-context: x',
      ].join('\n'),
    );

    assert.equal(
      loadsClientNode(`selectLock({ leaseName: 'a', kubeConfig: ${JSON.stringify(kubeconfig)} });`),
      true,
    );
  });
});
