/**
 * A kubeconfig that does not parse must be reported by the parser's reason, line and column
 * only: js-yaml's own message quotes the lines around the error, which in a kubeconfig are the
 * credentials. Real processes (the sidecar's bin, a Nest app) are spawned on such a file and
 * every line they print is checked.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

const SIDECAR_MAIN = fileURLToPath(new URL('../../../dist/esm/sidecar/main.js', import.meta.url));
const NEST_APP = fileURLToPath(new URL('./kube-config-app.fixture.js', import.meta.url));

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.c2VjcmV0LXRva2VuLXBheWxvYWQ.U0lHTkFUVVJF';
const KEY_DATA =
  'LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUV2UUlCQURBTkJna3Foa2lHOXcwQkFRRUZBQVNDQktjd2dnU2pBZ0VBQW9JQkFRQw==';

/** A kubeconfig whose YAML breaks right between the two secrets (a tab-indented line). */
const BROKEN = [
  'apiVersion: v1',
  'kind: Config',
  'clusters:',
  '- name: c',
  '  cluster: { server: "https://127.0.0.1:1" }',
  'users:',
  '- name: u',
  '  user:',
  `    token: ${TOKEN}`,
  '    client-key-data: "unterminated',
  `\tclient-certificate-data: ${KEY_DATA}`,
  'contexts: [{ name: x, context: { cluster: c, user: u } }]',
  'current-context: x',
  '',
].join('\n');

async function run(
  argv: string[],
  kubeconfig: string,
): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, argv, {
    env: { ...process.env, KUBECONFIG: kubeconfig, KUBERNETES_SERVICE_HOST: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, lines: output.split('\n') };
}

function assertNoSecret(lines: string[]): void {
  for (const line of lines) {
    for (const secret of [TOKEN, TOKEN.slice(0, 20), KEY_DATA.slice(0, 20), 'unterminated']) {
      assert.ok(!line.includes(secret), `a printed line holds a secret: ${line}`);
    }
    assert.doesNotMatch(line, /token:|client-key-data|client-certificate-data/);
  }
}

describe('a kubeconfig that does not parse: reason, line and column, never its text', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'kubeconfig-secrets-')), 'config');
  writeFileSync(file, BROKEN);

  test('the sidecar exits 2 naming the file, the reason and the position; no printed line holds a credential', async () => {
    const { code, lines } = await run([SIDECAR_MAIN, '--election', 'x'], file);
    assert.equal(code, 2, lines.join('\n'));
    const text = lines.join('\n');
    assert.ok(text.includes(file), text);
    assert.match(text, /is not valid YAML: .+ \(line \d+, column \d+\)\./);
    assertNoSecret(lines);
  });

  test('a Nest app on the kubernetes lock fails to bootstrap with the same message; nothing it prints (stack, causes) holds a credential', async () => {
    const { code, lines } = await run([NEST_APP], file);
    assert.notEqual(code, 0, lines.join('\n'));
    assert.match(lines.join('\n'), /is not valid YAML: .+ \(line \d+, column \d+\)\./);
    assertNoSecret(lines);
  });
});
