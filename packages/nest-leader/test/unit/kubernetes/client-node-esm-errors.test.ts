import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';

const KUBECONFIG_YAML = [
  'apiVersion: v1',
  'kind: Config',
  'clusters: [{ name: c, cluster: { server: "https://127.0.0.1:1" } }]',
  'users: [{ name: u, user: { token: t } }]',
  'contexts: [{ name: x, context: { cluster: c, user: u, namespace: billing } }]',
  'current-context: x',
  '',
].join('\n');

interface Outcome {
  name?: string;
  message?: string;
  causeCode?: string;
  causeName?: string;
}

/**
 * Runs `lock: 'kubernetes'` with a kubeconfig file in a fresh Node process (`nodeFlags`), after
 * `hooks` (module code registering resolve hooks, if any), and returns what selectLock threw.
 * Every error comes from Node's own loader: nothing is faked but where a module is found.
 */
function kubernetesLockIn(nodeFlags: string[], hooks = ''): Outcome {
  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-esm-'));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, KUBECONFIG_YAML);
  const script = `
    ${hooks}
    const { selectLock } = await import('nest-leader/core');
    try {
      selectLock({ lock: 'kubernetes', leaseName: 'jobs', kubeConfig: ${JSON.stringify(kubeconfig)} });
      console.log(JSON.stringify({}));
    } catch (error) {
      console.log(JSON.stringify({
        name: error.name,
        message: error.message,
        causeCode: error.cause?.code,
        causeName: error.cause?.name,
      }));
    }
  `;
  const output = execFileSync(
    process.execPath,
    [...nodeFlags, '--no-warnings', '--input-type=module', '-e', script],
    {
      cwd: fileURLToPath(new URL('.', import.meta.url)),
      env: { ...process.env, KUBECONFIG: '', HOME: dir },
      encoding: 'utf8',
    },
  );
  return JSON.parse(output.trim().split('\n').at(-1)!) as Outcome;
}

/** Module code that resolves `@kubernetes/client-node` as `resolve(next, context)` says. */
function redirectClientNode(body: string): string {
  return `
    import { registerHooks } from 'node:module';
    registerHooks({ resolve: (specifier, context, next) => {
      if (specifier !== '@kubernetes/client-node') return next(specifier, context);
      ${body}
    } });
  `;
}

describe('@kubernetes/client-node that cannot be loaded: the message names the real problem', () => {
  test('installed but ESM-only for a loader without require(esm) (ERR_REQUIRE_ESM): says so, not "Install it"', () => {
    const outcome = kubernetesLockIn(['--no-experimental-require-module']);

    assert.equal(outcome.causeCode, 'ERR_REQUIRE_ESM');
    assert.equal(outcome.name, 'LeaderElectionError');
    assert.match(outcome.message!, /@kubernetes\/client-node is installed, but it is ESM-only/);
    assert.match(outcome.message!, /lock 'memory'/);
    assert.match(outcome.message!, /NODE_OPTIONS=--experimental-vm-modules/);
    assert.doesNotMatch(outcome.message!, /Install it/);
  });

  test('an ES module evaluated as CommonJS ("Cannot use import statement outside a module", as Jest without ESM): ESM-only, not "Install it"', () => {
    // A package without "type": "module" whose main file is ESM syntax, required by a Node
    // without require(esm): the SyntaxError a CommonJS-only loader throws.
    const fake = mkdtempSync(join(tmpdir(), 'nest-leader-esm-as-cjs-'));
    mkdirSync(join(fake, 'client-node'));
    writeFileSync(join(fake, 'client-node', 'package.json'), '{"name":"@kubernetes/client-node"}');
    writeFileSync(join(fake, 'client-node', 'index.js'), 'export class KubeConfig {}\n');
    const url = pathToFileURL(join(fake, 'client-node', 'index.js')).href;
    const outcome = kubernetesLockIn(
      ['--no-experimental-require-module'],
      redirectClientNode(`return { url: ${JSON.stringify(url)}, shortCircuit: true };`),
    );

    assert.equal(outcome.causeName, 'SyntaxError');
    assert.match(
      outcome.message!,
      /Cannot use import statement outside a module|Unexpected token 'export'/,
    );
    assert.match(outcome.message!, /is installed, but it is ESM-only/);
    assert.doesNotMatch(outcome.message!, /Install it/);
  });

  test('really missing (MODULE_NOT_FOUND): "Install it"', () => {
    // Node's own resolver looking for a package that is not installed.
    const outcome = kubernetesLockIn(
      [],
      redirectClientNode(`return next('@kubernetes/client-node-not-installed', context);`),
    );

    assert.equal(outcome.causeCode, 'MODULE_NOT_FOUND');
    assert.match(outcome.message!, /Install it/);
    assert.doesNotMatch(outcome.message!, /ESM-only/);
  });

  test("an error made in another realm (Jest's module registry throws into the test's VM context): its message, not a dump of the object", () => {
    const outcome = kubernetesLockIn(
      [],
      `import { runInNewContext } from 'node:vm';
      ${redirectClientNode(`throw runInNewContext(\`Object.assign(
        new Error("Cannot find module '@kubernetes/client-node' from 'peer-dependency.loader.js'"),
        { code: 'MODULE_NOT_FOUND', moduleName: '@kubernetes/client-node' })\`);`)}`,
    );

    assert.equal(outcome.causeCode, 'MODULE_NOT_FOUND');
    assert.match(
      outcome.message!,
      /could not be loaded: Cannot find module '@kubernetes\/client-node' from 'peer-dependency.loader.js'\. Install it/,
    );
    assert.doesNotMatch(outcome.message!, /moduleName/);
  });
});
