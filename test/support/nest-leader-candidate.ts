/**
 * nest-leader's counterpart of `test/client-go-candidate`: one or more `LeaderElector`s with a
 * `LeaseLock` on one Lease (or, with `--lock configmap`, a `ConfigMapLock`), in one OS process,
 * with the same flags and the same JSON-lines events on stdout (see {@link CandidateEvent}), so
 * tests and benchmarks treat both implementations alike:
 *
 *   node test/dist/support/nest-leader-candidate.js --kubeconfig K --lease-name L --identity ts-1 \
 *     [--namespace default] [--candidates 1] [--lease-duration 15s] [--renew-deadline 10s] \
 *     [--retry-period 2s] [--release-on-cancel=true|false] [--lock lease|configmap] \
 *     [--fenced-db PATH [--pause-file PATH]] [--work-units isLive|signal]
 *     [--pod-template-hash H] [--priority N] [--yield-to-higher-priority]
 *     [--coordinated-binary-version 1.2.0 [--coordinated-emulation-version 1.1.0]]
 *   node test/dist/support/nest-leader-candidate.js --lock file --lock-file PATH --identity p1 …
 *
 * With `--lock file`, a `FileLock` on the lease file `--lock-file` (the laptop lock: no cluster,
 * so `--kubeconfig`, `--lease-name`, `--namespace` and the coordinated flags are not used).
 *
 * The library's log lines (info, warn, error) are `log` events (`level`, `message`): the file
 * lock tests assert on what a follower says about the holder.
 *
 * With `--fenced-db`, each candidate is also a fenced writer (the fencing-token test): every
 * 250 ms, if its gate (`elector.term`) says it leads, it appends an entry to the README's
 * `examples/fenced-ledger.ts` ledger in that SQLite database under its term's leaseTransitions
 * (`write-accepted`, or `write-rejected` when the database refuses a stale token), and the
 * same write to an unfenced table, to show what a lease alone lets through. When
 * `--pause-file` exists after the gate, it announces `write-window` and waits until the file is
 * gone before writing: the window in which the test SIGSTOPs it, closed by the test.
 *
 * With `--work-units`, each candidate does, while it leads, one unit of work every 100 ms
 * (`unit-done`), each after checking its term with the README's `term.isLive()` (`isLive`) or
 * `term.signal.aborted` (`signal`); the first unit whose check fails is refused
 * (`unit-refused`) and its term's work ends. The pause test SIGSTOPs it between two units.
 *
 * With `--coordinated-binary-version` each candidate takes part in Kubernetes' coordinated
 * leader election (a `LeaseCandidateRegistration` with those versions; the API server needs the
 * `CoordinatedLeaderElection` feature gate): it only follows the Lease the controller writes.
 *
 * A line `{"transfer":{"from":ID,"to":TARGET,"leaseDurationSeconds":N?}}` on stdin hands
 * candidate ID's term to TARGET (`transferLeadership`); it prints `handed-off` or
 * `handoff-failed`. `started` carries the term's reason (handoff, preferred, release, expired,
 * created). `--yield-to-higher-priority` sets the elector's `yieldToHigherPriority`.
 *
 * SIGUSR2 prints its memory after a full GC (`memory`; see `candidate-memory.ts`).
 *
 * SIGTERM/SIGINT stops every elector (`stop()`: the term ends — `stopped` — then, with
 * `--release-on-cancel`, the Lease is released, or handed to the preferred candidate when one
 * advertises itself: `--pod-template-hash`/`--priority` make a candidate advertise) and exits
 * 0. A candidate that loses its Lease campaigns again (the library's default), where the
 * client-go program exits.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { ElectionLogger, LeaderTerm } from 'nest-leader';
import {
  FileLock,
  LeaderElector,
  LeaseCandidateRegistration,
  type LeaderElectorOptions,
} from 'nest-leader/core';
import type { CandidateEvent, TransferOrder } from './candidate-process.js';
import { CANDIDATE_FLAG_OPTIONS, timingsFromFlags } from './candidate-flags.js';
import { monotonicNowMs } from './monotonic-time.js';
import { reportMemoryOnSignal } from './candidate-memory.js';

function emit(event: Omit<CandidateEvent, 'monotonicMs' | 'time'>): void {
  const line: CandidateEvent = {
    ...event,
    monotonicMs: monotonicNowMs(),
    time: new Date().toISOString(),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

interface FencedLedgerModule {
  openFencedLedger(path: string): DatabaseSync;
  fencedWrite(db: DatabaseSync, token: number, writer: string, entry: string): void;
}

/** `--fenced-db`: `elector`'s writes while it leads, forever (see the file's comment). */
async function writeFenced(
  elector: LeaderElector,
  dbPath: string,
  pauseFile?: string,
): Promise<void> {
  const ledger = (await import(
    new URL('../../../packages/nest-leader/build/examples/fenced-ledger.js', import.meta.url).href
  )) as FencedLedgerModule;
  const db = ledger.openFencedLedger(dbPath);
  db.exec(
    'CREATE TABLE IF NOT EXISTS unfenced (id INTEGER PRIMARY KEY, token INTEGER, writer TEXT)',
  );
  const { identity } = elector;
  let sequence = 0;
  for (;;) {
    await sleep(250);
    const term = elector.term; // the gate: live by the local clock, re-checked now
    if (!term) continue;
    const token = term.leaseTransitions;
    if (pauseFile && existsSync(pauseFile)) {
      emit({ event: 'write-window', identity, token });
      // Open until the test removes the file, not for a set time: too short, a slowed test
      // stops us inside the INSERT (holding SQLite's write lock); a timer armed only after a
      // SIGSTOP that came right behind the event line runs in full after SIGCONT.
      while (existsSync(pauseFile)) await sleep(20);
    }
    const entry = `${identity}#${++sequence}`;
    db.prepare('INSERT INTO unfenced (token, writer) VALUES (?, ?)').run(token, identity);
    try {
      ledger.fencedWrite(db, token, identity, entry);
      emit({ event: 'write-accepted', identity, token, entry });
    } catch (error) {
      emit({ event: 'write-rejected', identity, token, entry, error: (error as Error).message });
    }
  }
}

/** `--work-units`: units of work while `term` lasts (see the file's comment). */
async function workUnits(identity: string, term: LeaderTerm, check: string): Promise<void> {
  const token = term.leaseTransitions;
  for (let unit = 1; ; unit++) {
    const live = check === 'signal' ? !term.signal.aborted : term.isLive();
    if (!live) return emit({ event: 'unit-refused', identity, token, unit });
    emit({ event: 'unit-done', identity, token, unit });
    await sleep(100); // between two units of work: where the pause test stops the process
  }
}

/** A candidate's lock, and with `--coordinated-binary-version` its LeaseCandidate. */
type CampaignParts = Pick<LeaderElectorOptions, 'lock' | 'coordinated'>;

/**
 * What the flags say each candidate campaigns on: the lease file, or the Kubernetes object. The
 * Kubernetes client is loaded only for the latter: it doubles a file candidate's start-up on a
 * busy machine.
 */
async function campaignParts(values: {
  lock: string;
  'lock-file'?: string;
  kubeconfig?: string;
  'lease-name'?: string;
  namespace: string;
  'coordinated-binary-version'?: string;
  'coordinated-emulation-version'?: string;
}): Promise<(identity: string) => CampaignParts> {
  const binaryVersion = values['coordinated-binary-version'];
  if (values.lock === 'file') {
    const path = values['lock-file'];
    if (!path || binaryVersion !== undefined) {
      throw new Error('--lock file needs --lock-file and takes no --coordinated-binary-version');
    }
    return () => ({ lock: new FileLock({ path }) });
  }
  const { kubeconfig, 'lease-name': leaseName, namespace } = values;
  if (!kubeconfig || !leaseName) throw new Error('--lease-name and --kubeconfig are required');
  const { KubeConfig } = await import('@kubernetes/client-node');
  const { makeKubernetesLock } = await import('./kubernetes-locks.js');
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(readFileSync(kubeconfig, 'utf8'));
  return (identity) => ({
    lock: makeKubernetesLock(values.lock, { kubeConfig, name: leaseName, namespace, identity }),
    coordinated:
      binaryVersion === undefined
        ? undefined
        : new LeaseCandidateRegistration({
            kubeConfig,
            namespace,
            leaseName,
            identity,
            binaryVersion,
            emulationVersion: values['coordinated-emulation-version'],
            pingCheckIntervalMs: 500,
          }),
  });
}

/** The library's log lines as `log` events (debug left out: it is per retry period). */
function logEvents(identity: string): ElectionLogger {
  const log = (level: string) => (message: string) =>
    emit({ event: 'log', identity, level, message });
  return { debug: () => undefined, info: log('info'), warn: log('warn'), error: log('error') };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      ...CANDIDATE_FLAG_OPTIONS,
      lock: { type: 'string', default: 'lease' },
      'lock-file': { type: 'string' },
      'fenced-db': { type: 'string' },
      'pause-file': { type: 'string' },
      'work-units': { type: 'string' },
      'coordinated-binary-version': { type: 'string' },
      'coordinated-emulation-version': { type: 'string' },
      'yield-to-higher-priority': { type: 'boolean', default: false },
    },
  });
  const baseIdentity = values.identity;
  const count = Number(values.candidates);
  if (!baseIdentity || !Number.isSafeInteger(count) || count < 1) {
    throw new Error('--identity and --candidates ≥ 1 are required');
  }
  const unitCheck = values['work-units'];
  if (unitCheck !== undefined && unitCheck !== 'isLive' && unitCheck !== 'signal') {
    throw new Error(`--work-units must be isLive or signal, got "${unitCheck}"`);
  }
  const timings = timingsFromFlags(values);
  const releaseOnStop = values['release-on-cancel'] !== 'false';
  const podTemplateHash = values['pod-template-hash'];
  const priority = values.priority === undefined ? undefined : Number(values.priority);

  const partsFor = await campaignParts(values);
  const electors: LeaderElector[] = [];
  for (let i = 1; i <= count; i++) {
    const identity = count > 1 ? `${baseIdentity}-${i}` : baseIdentity;
    /** Set by the observer just before `onStartedLeading` (the notifier's order). */
    let startReason: string | undefined;
    const elector = new LeaderElector({
      ...partsFor(identity),
      identity,
      ...timings,
      releaseOnStop,
      podTemplateHash,
      priority,
      yieldToHigherPriority: values['yield-to-higher-priority'],
      logger: logEvents(identity),
      observer: { termStarted: (e) => (startReason = e.reason) },
      callbacks: {
        onStartedLeading: (term) => {
          emit({
            event: 'started',
            identity,
            leaseTransitions: term.leaseTransitions,
            reason: startReason,
          });
          if (unitCheck) void workUnits(identity, term, unitCheck);
        },
        onStoppedLeading: (term) =>
          emit({ event: 'stopped', identity, leaseTransitions: term.leaseTransitions }),
        onNewLeader: (leader) => emit({ event: 'new-leader', identity, leader }),
      },
    });
    electors.push(elector);
  }

  let exiting = false;
  const shutdown = async () => {
    if (exiting) return;
    exiting = true;
    await Promise.all(electors.map((elector) => elector.stop()));
    for (const elector of electors) {
      emit({ event: 'exit', identity: elector.identity, reason: 'signal' });
    }
    process.exit(0);
  };
  createInterface({ input: process.stdin }).on('line', (line) => {
    const { from, to, leaseDurationSeconds } = (JSON.parse(line) as TransferOrder).transfer;
    const elector = electors.find((e) => e.identity === from);
    const term = elector?.term;
    const failed = (error: unknown) =>
      emit({ event: 'handoff-failed', identity: from, leader: to, reason: String(error) });
    try {
      elector!.transferLeadership(to, { leaseDurationSeconds }).then(
        () =>
          emit({
            event: 'handed-off',
            identity: from,
            leader: to,
            leaseTransitions: term?.leaseTransitions,
          }),
        failed,
      );
    } catch (error) {
      failed(error);
    }
  });
  reportMemoryOnSignal((event) => emit({ ...event, identity: baseIdentity }));
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  for (const elector of electors) {
    emit({ event: 'ready', identity: elector.identity });
    elector.start();
    if (values['fenced-db']) void writeFenced(elector, values['fenced-db'], values['pause-file']);
  }
}

await main();
