/**
 * A kubeconfig that does not parse must be reported by the parser's reason, line and column
 * only: js-yaml's own message quotes the lines around the error, which in a kubeconfig are the
 * credentials. The bin is spawned on such a file and every line it prints is checked; the broken
 * file and the check are nest-leader's own test fixture (its Nest app gets the same test).
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import {
  assertNoSecret,
  PARSE_ERROR_AT,
  runWithKubeconfig,
  writeBrokenKubeconfig,
} from '../../../nest-leader/build/test/kubernetes/broken-kubeconfig.fixture.js';

const SIDECAR_MAIN = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

describe('a kubeconfig that does not parse: reason, line and column, never its text', () => {
  const file = writeBrokenKubeconfig();

  test('the sidecar exits 2 naming the file, the reason and the position; no printed line holds a credential', async () => {
    const { code, lines } = await runWithKubeconfig([SIDECAR_MAIN, '--election', 'x'], file);
    assert.equal(code, 2, lines.join('\n'));
    const text = lines.join('\n');
    assert.ok(text.includes(file), text);
    assert.match(text, PARSE_ERROR_AT);
    assertNoSecret(lines);
  });
});
