/**
 * A kubeconfig that does not parse, with credentials on the lines around the error, and how to
 * check that a program given it prints none of them. js-yaml's own message quotes the lines
 * around the error, which in a kubeconfig are the credentials: a program must report the parser's
 * reason, line and column only. Used by this package's test of a Nest app and by the
 * `nest-leader-elector` package's test of its bin (both spawn real processes on the file).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** What the parser's message must look like: its reason, then line and column. */
export const PARSE_ERROR_AT = /is not valid YAML: .+ \(line \d+, column \d+\)\./;

/** Writes the broken kubeconfig to a fresh temporary directory; returns its path. */
export function writeBrokenKubeconfig(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'kubeconfig-secrets-')), 'config');
  writeFileSync(file, BROKEN);
  return file;
}

/** Runs `node argv…` with `KUBECONFIG=kubeconfig` (and no in-cluster host) to its exit. */
export async function runWithKubeconfig(
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

/** Fails when a printed line holds any part of the kubeconfig's credentials. */
export function assertNoSecret(lines: string[]): void {
  for (const line of lines) {
    for (const secret of [TOKEN, TOKEN.slice(0, 20), KEY_DATA.slice(0, 20), 'unterminated']) {
      assert.ok(!line.includes(secret), `a printed line holds a secret: ${line}`);
    }
    assert.doesNotMatch(line, /token:|client-key-data|client-certificate-data/);
  }
}
