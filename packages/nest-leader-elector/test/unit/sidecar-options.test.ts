import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError } from 'nest-leader/core';
import { parseGoDurationMs, parseSidecarArgs } from '../../dist/sidecar-options.js';

const parse = (...argv: string[]) => parseSidecarArgs(argv, { hostname: 'pod-7' });

function rejects(argv: string[], option: string): void {
  assert.throws(
    () => parse(...argv),
    (error: unknown) =>
      error instanceof InvalidLeaderElectionOptionError && error.option === option,
  );
}

describe('nest-leader-elector flags (leader-elector:0.5 compatible)', () => {
  test('defaults: namespace default, id = hostname, ttl 10s → 10 / 5 / 2.5 s, no HTTP, no file', () => {
    assert.deepEqual(parse('--election', 'billing'), {
      election: 'billing',
      namespace: 'default',
      identity: 'pod-7',
      ttlMs: 10_000,
      leaseDurationSeconds: 10,
      renewDeadlineSeconds: 5,
      retryPeriodSeconds: 2.5,
      help: false,
    });
  });

  test('--flag=value, --flag value and Go-style -flag=value all parse', () => {
    const options = parse(
      '-election=billing',
      '--election-namespace',
      'jobs',
      '--id=me',
      '-ttl=4s',
      '--http=:4040',
      '--leader-file',
      '/leader-election/is-leader',
    );
    assert.equal(options.election, 'billing');
    assert.equal(options.namespace, 'jobs');
    assert.equal(options.identity, 'me');
    assert.deepEqual(
      [options.leaseDurationSeconds, options.renewDeadlineSeconds, options.retryPeriodSeconds],
      [4, 2, 1],
    );
    assert.deepEqual(options.http, { host: '0.0.0.0', port: 4040 });
    assert.equal(options.leaderFile, '/leader-election/is-leader');
  });

  test('a ttl of fractional seconds: lease duration rounded up, deadlines kept at ttl/2 and ttl/4', () => {
    const options = parse('--election', 'x', '--ttl', '2500ms');
    assert.deepEqual(
      [options.leaseDurationSeconds, options.renewDeadlineSeconds, options.retryPeriodSeconds],
      [3, 1.25, 0.625],
    );
  });

  test('--http accepts host:port and [v6]:port', () => {
    assert.deepEqual(parse('--election', 'x', '--http', 'localhost:4040').http, {
      host: 'localhost',
      port: 4040,
    });
    assert.deepEqual(parse('--election', 'x', '--http', '[::1]:0').http, { host: '::1', port: 0 });
  });

  test('--election is required and must be a DNS-1123 subdomain', () => {
    rejects([], '--election');
    rejects(['--election', 'Not_A_Name'], '--election');
  });

  test('bad values name the flag as written', () => {
    rejects(['--election', 'x', '--ttl', '10'], '--ttl');
    rejects(['--election', 'x', '--ttl', '500ms'], '--ttl');
    rejects(['--election', 'x', '--http', '4040'], '--http');
    rejects(['--election', 'x', '--http', 'h:70000'], '--http');
    rejects(['--election', 'x', '--election-namespace', 'UPPER'], '--election-namespace');
    rejects(['--election', 'x', '--leader-file', ''], '--leader-file');
    rejects(['--election', 'x', '--use-endpoints'], 'command line');
  });

  test('transfers are off by default; --transfer-http :port means loopback, not every interface', () => {
    assert.equal(parse('--election', 'x', '--http', ':4040').transferHttp, undefined);
    assert.deepEqual(parse('--election', 'x', '--transfer-http', ':4041').transferHttp, {
      host: '127.0.0.1',
      port: 4041,
    });
    assert.deepEqual(parse('--election', 'x', '--transfer-http', '[::1]:4041').transferHttp, {
      host: '::1',
      port: 4041,
    });
  });

  test('--transfer-http beyond loopback is refused without --transfer-token-file, accepted with one', () => {
    for (const address of ['0.0.0.0:4041', '10.0.0.7:4041', '[::]:4041', 'pod.example:4041']) {
      assert.throws(
        () => parse('--election', 'x', '--transfer-http', address),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError &&
          error.option === '--transfer-http' &&
          /needs --transfer-token-file/.test(error.message),
        address,
      );
    }
    const options = parse(
      '--election=x',
      '--transfer-http=0.0.0.0:4041',
      '--transfer-token-file=/var/run/secrets/transfer/token',
    );
    assert.deepEqual(options.transferHttp, { host: '0.0.0.0', port: 4041 });
    assert.equal(options.transferTokenFile, '/var/run/secrets/transfer/token');
    rejects(['--election', 'x', '--transfer-token-file', '/t'], '--transfer-token-file');
    rejects(
      ['--election', 'x', '--transfer-http', ':1', '--transfer-token-file', ''],
      '--transfer-token-file',
    );
  });

  test('Go durations', () => {
    assert.equal(parseGoDurationMs('10s'), 10_000);
    assert.equal(parseGoDurationMs('1m30s'), 90_000);
    assert.equal(parseGoDurationMs('1.5s'), 1500);
    assert.equal(parseGoDurationMs('1h'), 3_600_000);
    assert.equal(parseGoDurationMs('0'), 0);
    assert.ok(Number.isNaN(parseGoDurationMs('10')));
    assert.ok(Number.isNaN(parseGoDurationMs('s')));
    assert.ok(Number.isNaN(parseGoDurationMs('')));
  });
});
