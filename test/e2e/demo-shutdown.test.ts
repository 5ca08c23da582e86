/**
 * A demo replica shuts down (drains, releases, exits 0) on SIGTERM while clients keep its
 * connections busy. Found by the chaos harness (one replica in 143 SIGTERMs never exited):
 * Node's `server.close()` closes only the connections idle at that moment and then waits for
 * the others, and a connection with a request in flight at that moment stays open — for ever,
 * when a client (the harness's probes, a load balancer) keeps sending requests on it. The demo
 * now creates the app with `forceCloseConnections: true`. Here a client that has sent a
 * request's headers but not yet its body makes "a request in flight at close()" certain.
 * One replica on a file lock in a temporary directory.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { ReplicaProcess } from '@nest-leader/demo/launcher/replica-process';
import { startFileLockLeader } from './support/file-lock-leader.js';

describe('demo shutdown under keep-alive clients', { timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'nest-leader-e2e-shutdown-'));
  let replica: ReplicaProcess | undefined;
  after(() => {
    replica?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('SIGTERM with a request in flight and two clients polling: released, exit 0 within 10 s', async () => {
    replica = await startFileLockLeader(dir, 'shutdown-1', {}, (r) => (replica = r));
    // Each client sends its next request as soon as the last answer arrived, on the same
    // keep-alive connection (fetch pools them), so a request is in flight at almost any time.
    const answered = [0, 0];
    let polling = true;
    const poll = async (client: number) => {
      while (polling) {
        try {
          await replica!.request('/healthz', { timeoutMs: 2000 });
          answered[client]!++;
        } catch {
          return; // the server closed the connection: shutting down
        }
      }
    };
    const clients = [poll(0), poll(1)];
    await new Promise((resolve) => setTimeout(resolve, 500));
    assert.ok(
      answered.every((n) => n > 0),
      `both clients were answered before SIGTERM: ${answered.join(', ')}`,
    );

    // A request whose body has not arrived: the JSON body parser waits for it.
    const slowUpload = connect(replica.port, '127.0.0.1');
    await new Promise((resolve) => slowUpload.once('connect', resolve));
    slowUpload.on('error', () => undefined);
    slowUpload.write(
      'POST /jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 2\r\n\r\n',
    );
    await new Promise((resolve) => setTimeout(resolve, 200));

    const stoppingAt = performance.now();
    const status = await replica.stop(15_000); // SIGTERM, then SIGKILL after 15 s
    const exitMs = performance.now() - stoppingAt;
    polling = false;
    await Promise.all(clients);
    slowUpload.destroy();

    assert.deepEqual(
      { code: status.code, signal: status.signal },
      { code: 0, signal: null },
      `exit after ${Math.round(exitMs)} ms`,
    );
    assert.ok(exitMs < 10_000, `exited ${Math.round(exitMs)} ms after SIGTERM`);
    assert.ok(
      replica.events.some((r) => r.event.event === 'replica-stopped'),
      'it logged replica-stopped (after draining and releasing)',
    );
  });
});
