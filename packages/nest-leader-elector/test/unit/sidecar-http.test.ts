/**
 * The sidecar's two HTTP servers under hostile requests, on real sockets (node:net): the
 * `LeaderElectorSidecar` itself on a MemoryLock and a ManualClock, with short HTTP timeouts.
 * After every attack it must still answer and still lead.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { InvalidLeaderElectionOptionError, LeaderElector } from 'nest-leader/core';
import { LeaderElectorSidecar } from '../../dist/leader-elector.sidecar.js';
import { parseSidecarArgs } from '../../dist/sidecar-options.js';
import { ManualClock, MemoryLock, RecordingLogger } from 'nest-leader/testing';

const LIMITS = {
  headersTimeoutMs: 400,
  requestTimeoutMs: 800,
  connectionsCheckingIntervalMs: 50,
  maxConnections: 6,
};
const TOKEN = 'k3HqT9vX2mB7pL4sW8yZ';

/** What a raw exchange got back: the status of the first answer, and everything received. */
interface RawAnswer {
  status: number | undefined;
  text: string;
}

/** Sends `request` as is and collects the answer until the server closes the socket. */
async function raw(port: number, request: string | Buffer, host = '127.0.0.1'): Promise<RawAnswer> {
  const socket = connect(port, host);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined); // a reset after the answer is fine
  socket.write(request);
  await new Promise((resolve) => socket.on('close', resolve)); // also after a reset
  const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
  return { status: status === undefined ? undefined : Number(status), text };
}

/** A socket that sends the start of a request head and never finishes it. */
async function slowClient(port: number): Promise<{ socket: Socket; closed: Promise<RawAnswer> }> {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  socket.write('GET / HTTP/1.1\r\nHost: sidecar\r\nX-Slow: ');
  const closed = new Promise((resolve) => socket.on('close', resolve)).then(() => {
    const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
    return { status: status === undefined ? undefined : Number(status), text };
  });
  return { socket, closed };
}

function body(answer: RawAnswer): Record<string, unknown> {
  return JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4)) as Record<
    string,
    unknown
  >;
}

const get = (path: string) => `GET ${path} HTTP/1.1\r\nHost: sidecar\r\nConnection: close\r\n\r\n`;

/** A POST /transfer with `headers` (lower-case names) and `content` as the body. */
function post(content: string, headers: Record<string, string> = {}): string {
  const all: Record<string, string> = {
    host: 'sidecar',
    connection: 'close',
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(content)),
    ...headers,
  };
  const head = Object.entries(all)
    .filter(([, value]) => value !== '')
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return `POST /transfer HTTP/1.1\r\n${head}\r\n${content}`;
}

function portOf(address: string | undefined): number {
  return Number(/:(\d+)$/.exec(address ?? '')![1]);
}

describe('nest-leader-elector HTTP servers under hostile requests (real sockets)', () => {
  const clock = new ManualClock();
  const lock = new MemoryLock({ name: 'sidecar-http' });
  const logger = new RecordingLogger();
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'sidecar-token-')), 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`);
  let sidecar: LeaderElectorSidecar;
  let guarded: LeaderElectorSidecar;
  let follower: LeaderElector;
  let status: number;
  let transfer: number;

  /** The sidecar still serves and still leads: GET /ready 200, the Lease names it. */
  async function assertStillLeading(): Promise<void> {
    const ready = await raw(status, get('/ready'));
    assert.equal(ready.status, 200, ready.text);
    assert.equal(body(ready).leader, true);
    assert.equal(lock.read()!.record.holderIdentity, 'a');
    assert.equal(sidecar.elector.isLeader(), true);
  }

  before(async () => {
    const options = parseSidecarArgs(
      ['--election=e', '--ttl=15s', '--http=127.0.0.1:0', '--transfer-http=:0'],
      { hostname: 'a' },
    );
    sidecar = new LeaderElectorSidecar(options, { lock, clock, logger, httpLimits: LIMITS });
    await sidecar.start();
    await clock.advance(0);
    // An advertised candidate without jitter (its reads come every retryPeriod exactly).
    follower = new LeaderElector({
      lock,
      identity: 'b',
      clock,
      logger: new RecordingLogger(),
      random: () => 0,
      priority: 0,
    });
    follower.start();
    await clock.advance(1000);
    status = portOf(sidecar.address);
    transfer = portOf(sidecar.transferAddress);
    // A second sidecar (never leading: it only shows the token check) with a token.
    guarded = new LeaderElectorSidecar(
      parseSidecarArgs(
        ['--election=e', '--transfer-http=127.0.0.1:0', `--transfer-token-file=${tokenFile}`],
        { hostname: 'g' },
      ),
      { lock: new MemoryLock({ name: 'guarded' }), clock: new ManualClock(), logger },
    );
    await guarded.start();
  });
  after(async () => {
    await Promise.all([sidecar.stop(), guarded.stop(), follower.stop()]);
  });

  test('the transfer address defaults to loopback and is not the status address', () => {
    assert.match(sidecar.transferAddress!, /^127\.0\.0\.1:\d+$/);
    assert.notEqual(transfer, status);
  });

  test('GET // and GET http://[ (targets that make new URL throw) answer 4xx; the sidecar still leads', async () => {
    for (const target of ['//', 'http://[', '//[', '/ready//x', '/%zz']) {
      const answer = await raw(status, get(target));
      assert.ok(
        answer.status !== undefined && answer.status >= 400 && answer.status < 500,
        `${target}: ${answer.text}`,
      );
      const onTransfer = await raw(transfer, get(target));
      assert.ok(
        onTransfer.status !== undefined && onTransfer.status >= 400 && onTransfer.status < 500,
        `${target} (transfer): ${onTransfer.text}`,
      );
    }
    await assertStillLeading();
  });

  test('a 100 KB header answers 431 and the connection closes; the sidecar still leads', async () => {
    const huge = `GET / HTTP/1.1\r\nHost: sidecar\r\nX-Big: ${'a'.repeat(100 * 1024)}\r\n\r\n`;
    assert.equal((await raw(status, huge)).status, 431);
    assert.equal((await raw(transfer, huge)).status, 431);
    await assertStillLeading();
  });

  test('slow clients that never finish their headers are cut off (408); over the connection cap, new connections are closed; then it answers again', async () => {
    // The server counts a connection until its own side has closed, a moment after the
    // client saw the close: let the earlier tests' connections go.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const slow = await Promise.all(
      Array.from({ length: LIMITS.maxConnections }, () => slowClient(status)),
    );
    // At the cap: a further connection is closed without an answer.
    const refused = await raw(status, get('/'));
    assert.equal(refused.status, undefined, refused.text);
    const startedMs = performance.now();
    const cut = await Promise.all(slow.map((s) => s.closed));
    const tookMs = performance.now() - startedMs;
    for (const answer of cut) assert.equal(answer.status, 408, answer.text);
    assert.ok(tookMs < 5_000, `slow clients were cut off after ${Math.round(tookMs)} ms`);
    const answer = await raw(status, get('/'));
    assert.equal(answer.status, 200);
    assert.equal(body(answer).name, 'a');
    await assertStillLeading();
  });

  test('GET /healthz answers only {"healthy"}; POST /transfer on --http answers 404 naming --transfer-http', async () => {
    const health = await raw(status, get('/healthz'));
    assert.equal(health.status, 200);
    assert.deepEqual(body(health), { healthy: true });
    const misplaced = await raw(status, post(JSON.stringify({ to: 'b' })));
    assert.equal(misplaced.status, 404);
    assert.match(String(body(misplaced).error), /--transfer-http/);
    assert.equal(lock.read()!.record.holderIdentity, 'a');
  });

  test('a cross-site POST is refused: an Origin header (403), a form or text body (415)', async () => {
    const to = JSON.stringify({ to: 'b' });
    const fromPage = await raw(transfer, post(to, { origin: 'https://evil.example' }));
    assert.equal(fromPage.status, 403, fromPage.text);
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', '']) {
      const simple = await raw(transfer, post(to, { 'content-type': type }));
      assert.equal(simple.status, 415, `${type}: ${simple.text}`);
    }
    await assertStillLeading();
  });

  test('malformed bodies answer 400 or 413 with a JSON error; nothing is written', async () => {
    for (const [content, expected] of [
      ['not json', 400],
      ['[]', 400],
      ['{"to":"b","extra":1}', 400],
      ['{}', 400],
      ['{"to":"b\\nINFO forged line"}', 400],
      [JSON.stringify({ to: 'x'.repeat(129) }), 400],
      [JSON.stringify({ to: 'b', leaseDurationSeconds: '15' }), 400],
      [JSON.stringify({ to: 'b', pad: 'p'.repeat(2000) }), 413],
    ] as const) {
      const answer = await raw(transfer, post(content));
      assert.equal(
        answer.status,
        expected,
        `${content.slice(0, 40)}: ${answer.text.slice(0, 300)}`,
      );
      assert.equal(typeof body(answer).error, 'string');
    }
    await assertStillLeading();
  });

  test('a transfer to a ghost (not advertising itself) is refused with 409; a huge bound with 400; the sidecar keeps the Lease', async () => {
    const ghost = await raw(
      transfer,
      post(JSON.stringify({ to: 'ghost', leaseDurationSeconds: 2147483647 })),
    );
    assert.equal(ghost.status, 409, ghost.text);
    assert.match(String(body(ghost).error), /"ghost" does not advertise itself/);
    const huge = await raw(
      transfer,
      post(JSON.stringify({ to: 'b', leaseDurationSeconds: 2147483647 })),
    );
    assert.equal(huge.status, 400, huge.text);
    assert.match(
      String(body(huge).error),
      /leaseDurationSeconds.*at most the election's leaseDurationSeconds \(15\)/,
    );
    await assertStillLeading();
    assert.equal(lock.read()!.record.leaseDurationSeconds, 15);
  });

  test('with --transfer-token-file: no or a wrong token answers 401 before anything else is looked at', async () => {
    const port = portOf(guarded.transferAddress);
    const to = JSON.stringify({ to: 'b' });
    for (const authorization of ['', `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(1)}`, TOKEN]) {
      const answer = await raw(port, post(to, { authorization, origin: 'https://evil.example' }));
      assert.equal(answer.status, 401, `${authorization}: ${answer.text}`);
      assert.match(answer.text, /www-authenticate: Bearer/i);
    }
    // The right token gets past the check, to the next refusal: "b" is no candidate there.
    const allowed = await raw(port, post(to, { authorization: `Bearer ${TOKEN}` }));
    assert.equal(allowed.status, 409, allowed.text);
    assert.match(String(body(allowed).error), /not leading|does not advertise/);
  });

  test('last: a valid transfer to an advertised candidate answers 200 and hands the Lease over, reserved for it one offer window (it accepted)', async () => {
    const pending = raw(transfer, post(JSON.stringify({ to: 'b' })));
    let answered = false;
    void pending.finally(() => (answered = true));
    // b, an advertised candidate, accepts the handoff offer at its next read (retryPeriod 3.75 s).
    for (let i = 0; i < 200 && !answered; i++) {
      await clock.advance(100);
      await new Promise((resolve) => setTimeout(resolve, 1)); // the socket's I/O
    }
    const answer = await pending;
    assert.equal(answer.status, 200, answer.text);
    // The offer window at ttl 15 s (retryPeriod 3.75 s): 2 × 3.75 s, rounded up — not the ttl.
    assert.deepEqual(body(answer), { to: 'b', leaseDurationSeconds: 8, leaseTransitions: 1 });
    const { record } = lock.read()!;
    assert.equal(record.holderIdentity, 'b');
    assert.equal(record.leaseDurationSeconds, 8);
  });
});

describe('--transfer-token-file: refused at start when unusable, never echoing the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sidecar-token-bad-'));
  const start = (file: string) =>
    new LeaderElectorSidecar(
      parseSidecarArgs(['--election=e', '--transfer-http=:0', `--transfer-token-file=${file}`], {
        hostname: 'a',
      }),
      { lock: new MemoryLock({ name: 'token' }), clock: new ManualClock() },
    );

  test('a short token, one with spaces, and a missing file name the flag and the rule, not the contents', () => {
    const short = join(dir, 'short');
    writeFileSync(short, 'hunter2-secret\n');
    const spaced = join(dir, 'spaced');
    writeFileSync(spaced, 'correct horse battery staple\n');
    for (const [file, rule] of [
      [short, /at least 16 printable ASCII characters/],
      [spaced, /without spaces/],
      [join(dir, 'missing'), /readable file \(reading it failed: ENOENT\)/],
    ] as const) {
      assert.throws(
        () => start(file),
        (error: unknown) =>
          error instanceof InvalidLeaderElectionOptionError &&
          error.option === '--transfer-token-file' &&
          rule.test(error.message) &&
          !/hunter2|horse/.test(error.message),
        file,
      );
    }
  });
});

describe('GET /healthz of a failed sidecar: 503 without the internal error text', () => {
  test('the election loop failed with an internal error: the answer is {"healthy":false}, the reason goes to the log', async () => {
    const logger = new RecordingLogger();
    const info = logger.info.bind(logger);
    logger.info = (message) => {
      if (String(message).includes('started leading')) {
        throw new Error('internal state at 0x7f3a: secret=s3cr3t-internal-detail');
      }
      info(message);
    };
    const clock = new ManualClock();
    const failed = new LeaderElectorSidecar(
      parseSidecarArgs(['--election=e', '--http=127.0.0.1:0'], { hostname: 'a' }),
      { lock: new MemoryLock({ name: 'failed' }), clock, logger },
    );
    await failed.start();
    await clock.advance(0);
    try {
      assert.equal(failed.elector.health().healthy, false, 'the loop failed');
      const answer = await raw(portOf(failed.address), get('/healthz'));
      assert.equal(answer.status, 503, answer.text);
      assert.deepEqual(body(answer), { healthy: false });
      assert.doesNotMatch(answer.text, /s3cr3t|0x7f3a|internal state/);
      assert.ok(
        logger.matching('warn', 's3cr3t-internal-detail').length === 1,
        'the reason is logged once',
      );
    } finally {
      await failed.stop();
    }
  });
});
