/**
 * The library's HTTP connections to the real kube-apiserver: every request a lock, its watch
 * and the observers make for one kubeconfig goes over one pooled HTTP/1.1 keep-alive
 * connection, never HTTP/2. Regression test of the chaos harness's replica crash: client-node
 * 2.x alone opens a new connection per request and negotiates h2, and Node's HTTP/2 client
 * then spun after an event-loop block until `std::bad_alloc` (README, "Chaos").
 *
 * Connections are counted with undici's `undici:client:connected` diagnostics channel, which
 * the undici copy client-node uses publishes for every new connection.
 */
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { CoordinationV1Api, EventsV1Api, KubeConfig } from '@kubernetes/client-node';
import type { LeaderTerm } from 'nest-leader';
import { LeaseLock } from 'nest-leader/core';
import { LeaseEventsObserver } from 'nest-leader/observability';
import {
  getTestCluster,
  kubeConfigFor,
  readAuditEvents,
  uniqueLeaseName,
} from '../support/cluster.js';
import { eventually } from '../support/eventually.js';

const cluster = getTestCluster();
const namespace = cluster.namespace;

/** The protocol (ALPN) of every connection opened while the test runs, in order. */
let opened: string[] = [];
const onConnected = (message: unknown) => {
  const socket = (message as { socket: TLSSocket }).socket;
  opened.push(socket.alpnProtocol || 'none');
};

/** Asserts that at least one and at most `max` connections were opened, all HTTP/1.1. */
function assertPooled(max: number): void {
  assert.ok(opened.length >= 1 && opened.length <= max, `connections: ${opened.join(', ')}`);
  assert.deepEqual(
    opened.filter((protocol) => protocol !== 'http/1.1'),
    [],
  );
}

/**
 * A client certificate for user `name` in group system:masters, signed by our control plane's
 * CA with openssl; returns the paths of the certificate and its key.
 */
function issueClientCertificate(dir: string, name: string): { cert: string; key: string } {
  const pki = join(cluster.stateDir!, 'pki');
  const [key, csr, cert] = ['key', 'csr', 'crt'].map((ext) => join(dir, `${name}.${ext}`));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    ...['-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
    ...['-keyout', key!, '-out', csr!, '-subj', `/O=system:masters/CN=${name}`],
  );
  openssl(
    'x509',
    ...['-req', '-in', csr!, '-CA', join(pki, 'ca.crt'), '-CAkey', join(pki, 'ca.key')],
    ...['-CAcreateserial', '-days', '1', '-out', cert!],
  );
  return { cert: cert!, key: key! };
}

function record(holderIdentity: string) {
  const now = new Date();
  return {
    holderIdentity,
    leaseDurationSeconds: 15,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: 0,
  };
}

describe('HTTP connections to kube-apiserver (real control plane)', () => {
  beforeEach(() => {
    opened = [];
    subscribe('undici:client:connected', onConnected);
  });
  afterEach(() => unsubscribe('undici:client:connected', onConnected));

  test('client-node alone: a new connection per request, HTTP/2 (why the pool exists)', async () => {
    const api = kubeConfigFor(cluster).makeApiClient(CoordinationV1Api);
    const name = uniqueLeaseName('conn-plain');
    await api.createNamespacedLease({
      namespace,
      body: { metadata: { name }, spec: { holderIdentity: 'plain' } },
    });
    for (let i = 0; i < 10; i++) await api.readNamespacedLease({ name, namespace });
    assert.equal(opened.length, 11, `connections: ${opened.join(', ')}`);
    assert.ok(
      opened.every((protocol) => protocol === 'h2'),
      opened.join(', '),
    );
  });

  test('a LeaseLock: create, then 20 reads and 20 renewals over at most two HTTP/1.1 connections', async () => {
    const lock = new LeaseLock({
      kubeConfig: kubeConfigFor(cluster),
      name: uniqueLeaseName('conn-lock'),
      namespace,
      identity: 'pod-a',
    });
    let version = await lock.create(record('pod-a'));
    for (let i = 0; i < 20; i++) {
      const read = await lock.get();
      assert.equal(read?.version, version);
      version = await lock.update(record('pod-a'), version);
    }
    // 41 requests, one after another. undici may see the first connection still busy for a
    // moment after a response was read, and open a second one; both are then reused.
    assertPooled(2);
  });

  test('a watch, the lock and the Events observer on one kubeconfig share the pool', async () => {
    const kubeConfig = kubeConfigFor(cluster);
    const name = uniqueLeaseName('conn-watch');
    const lock = new LeaseLock({ kubeConfig, name, namespace, identity: 'pod-a' });
    const watcher = new LeaseLock({ kubeConfig, name, namespace, identity: 'pod-b' });
    const events = new LeaseEventsObserver({
      kubeConfig,
      namespace,
      leaseName: name,
      logger: { debug() {}, warn() {} },
    });
    let version = await lock.create(record('pod-a'));
    const seen: string[] = [];
    const abort = new AbortController();
    let connected!: () => void;
    const isConnected = new Promise<void>((resolve) => (connected = resolve));
    watcher.watch(
      {
        onRecord: (current) => current && seen.push(current.version),
        onConnected: () => connected(),
        onDisconnected() {},
        onUnavailable() {},
      },
      abort.signal,
      { fromVersion: version },
    );
    try {
      await isConnected;
      for (let i = 0; i < 5; i++) version = await lock.update(record('pod-a'), version);
      // The observer only reads the identity; the Event is created as the elector would have it.
      events.termStarted({
        election: name,
        identity: 'pod-a',
        term: {} as LeaderTerm,
        reason: 'created',
      });
      await events.flush();
      await eventually(
        () => assert.ok(seen.includes(version), `the watch saw ${seen.join(', ')}, not ${version}`),
        { timeoutMs: 5_000, intervalMs: 20 },
      );
    } finally {
      abort.abort();
    }
    // The watch holds one connection for as long as it runs; the 8 other requests share the rest.
    assertPooled(3);
    const list = await kubeConfigFor(cluster)
      .makeApiClient(EventsV1Api)
      .listNamespacedEvent({ namespace });
    assert.deepEqual(
      list.items.filter((e) => e.regarding?.name === name).map((e) => e.note),
      ['pod-a became leader: created (it created the Lease)'],
    );
  });

  test(
    'a client certificate rotated on disk: the next request uses the new one (a new pool)',
    { skip: cluster.source !== 'control-plane' && "needs our own control plane's CA key" },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'nest-leader-rotation-'));
      const first = issueClientCertificate(dir, 'rotation-1');
      const second = issueClientCertificate(dir, 'rotation-2');
      const [certFile, keyFile] = [join(dir, 'client.crt'), join(dir, 'client.key')];
      copyFileSync(first.cert, certFile);
      copyFileSync(first.key, keyFile);
      const admin = kubeConfigFor(cluster).getCurrentCluster()!;
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromOptions({
        clusters: [admin],
        users: [{ name: 'rotating', certFile, keyFile }],
        contexts: [{ name: 'rotating', cluster: admin.name, user: 'rotating' }],
        currentContext: 'rotating',
      });
      const name = uniqueLeaseName('conn-rotation');
      const lock = new LeaseLock({ kubeConfig, name, namespace, identity: 'pod-a' });
      let version = await lock.create(record('pod-a'));
      version = await lock.update(record('pod-a'), version);
      copyFileSync(second.cert, certFile); // as cert-manager or the kubelet rotate them
      copyFileSync(second.key, keyFile);
      await lock.update(record('pod-a'), version);

      const writers = readAuditEvents(cluster)
        .filter((e) => e.objectRef?.name === name && e.verb !== 'get')
        .map((e) => `${e.verb} by ${e.user.username}`);
      assert.deepEqual(writers, [
        'create by rotation-1',
        'update by rotation-1',
        'update by rotation-2',
      ]);
      assertPooled(3); // the first pool's one or two connections, then the new pool's
    },
  );
});
