/**
 * A kubeconfig that does not parse must be reported by the parser's reason, line and column
 * only: js-yaml's own message quotes the lines around the error, which in a kubeconfig are the
 * credentials. A Nest app is spawned on such a file and every line it prints is checked (the
 * `nest-leader-elector` package checks its bin the same way).
 */
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import {
  assertNoSecret,
  PARSE_ERROR_AT,
  runWithKubeconfig,
  writeBrokenKubeconfig,
} from './broken-kubeconfig.fixture.js';

const NEST_APP = fileURLToPath(new URL('./kube-config-app.fixture.js', import.meta.url));

describe('a kubeconfig that does not parse: reason, line and column, never its text', () => {
  const file = writeBrokenKubeconfig();

  test('a Nest app on the kubernetes lock fails to bootstrap with the same message; nothing it prints (stack, causes) holds a credential', async () => {
    const { code, lines } = await runWithKubeconfig([NEST_APP], file);
    assert.notEqual(code, 0, lines.join('\n'));
    assert.match(lines.join('\n'), PARSE_ERROR_AT);
    assertNoSecret(lines);
  });
});
