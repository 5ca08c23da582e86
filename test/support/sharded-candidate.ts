/**
 * A member of a sharded election (`ShardedElection` + `KubernetesShardLeaseStore`) as one OS
 * process, started by the candidate harness (`program: 'sharded'`), with the harness's flags
 * and JSON-lines events:
 *
 *   node test/dist/support/sharded-candidate.js --kubeconfig K --lease-name L --namespace N \
 *     --identity m1 --shards 64 [--lease-duration 4s --renew-deadline 3s --retry-period 1s]
 *
 * `ready` when it joins; `started`/`stopped` per shard term (`shard`, `token`, `reason`); and
 * every 200 ms one `units` line: the shards whose term passed its call-time check
 * (`term.isLive()`) right then, with their tokens — the work each owner actually did, which the
 * per-shard overlap check judges (a paused process does no units, and its first check after
 * waking fails) — and whether it coordinates the election then. SIGTERM leaves gracefully
 * (drains, releases its member Lease) and exits 0. SIGUSR2 prints its memory after a full GC
 * (`memory`; see `candidate-memory.ts`).
 *
 * With `--fenced-dir D`, each tick also writes one entry per live shard to that shard's fenced
 * ledger (`D/shard-<n>.sqlite`, the README's `examples/fenced-ledger.ts`, which refuses a token
 * lower than one it holds) under the shard's token: `write-accepted` or `write-rejected`
 * (`shard`, `token`). With `--pause-file P`, while P exists it announces `write-window` after
 * its check and waits for P to be gone before writing: the window in which a test SIGSTOPs it.
 * With `--quiet-accepted`, accepted writes are not announced (the ledgers keep them; a long chaos
 * run reads them there); refused ones still are.
 *
 * `--ignore-revoke` makes it a deliberately unsafe member, the positive control of the chaos
 * harness's sharded mode: a shard term that ends because its shard was revoked is not stopped —
 * the member keeps working that shard under the old token (in its `units`) until it starts a new
 * term of it, as an owner that ignores its revoke would.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DatabaseSync } from 'node:sqlite';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { type ElectionLogger, KubernetesShardLeaseStore, ShardedElection } from 'nest-leader/core';
import type { CandidateEvent } from './candidate-process.js';
import { CANDIDATE_FLAG_OPTIONS, timingsFromFlags } from './candidate-flags.js';
import { monotonicNowMs } from './monotonic-time.js';
import { reportMemoryOnSignal } from './candidate-memory.js';

/** Prints `event` stamped now; `checkAfterStamp` (a term's call-time check) runs after the stamp. */
function emit(
  event: Omit<CandidateEvent, 'monotonicMs' | 'time'>,
  checkAfterStamp?: () => boolean,
): void {
  const monotonicMs = monotonicNowMs();
  const time = new Date().toISOString();
  const line: CandidateEvent = {
    ...event,
    ...(checkAfterStamp && { live: checkAfterStamp() }),
    monotonicMs,
    time,
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

function logEvents(identity: string): ElectionLogger {
  const log = (level: string) => (message: string) =>
    emit({ event: 'log', identity, level, message });
  return { debug: () => undefined, info: log('info'), warn: log('warn'), error: log('error') };
}

const UNIT_PERIOD_MS = 200;

interface FencedLedgerModule {
  openFencedLedger(path: string): DatabaseSync;
  fencedWrite(db: DatabaseSync, token: number, writer: string, entry: string): void;
}

/** Writes `token`'s entry to the fenced ledger of each shard (see the file's comment). */
async function fencedWrites(
  identity: string,
  dir: string,
  pauseFile: string | undefined,
  live: { shard: number; token: number }[],
  ledgers: Map<number, DatabaseSync>,
  ledger: FencedLedgerModule,
  quietAccepted: boolean,
): Promise<void> {
  if (live.length === 0) return;
  if (pauseFile && existsSync(pauseFile)) {
    emit({ event: 'write-window', identity, shard: live[0]!.shard, token: live[0]!.token });
    while (existsSync(pauseFile)) await sleep(20);
  }
  for (const { shard, token } of live) {
    let db = ledgers.get(shard);
    if (!db) ledgers.set(shard, (db = ledger.openFencedLedger(join(dir, `shard-${shard}.sqlite`))));
    const entry = `${identity}@${token}`;
    try {
      ledger.fencedWrite(db, token, identity, entry);
      if (!quietAccepted) emit({ event: 'write-accepted', identity, shard, token, entry });
    } catch (error) {
      emit({
        event: 'write-rejected',
        identity,
        shard,
        token,
        entry,
        error: (error as Error).message,
      });
    }
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      ...CANDIDATE_FLAG_OPTIONS,
      shards: { type: 'string', default: '64' },
      'fenced-dir': { type: 'string' },
      'pause-file': { type: 'string' },
      'quiet-accepted': { type: 'boolean', default: false },
      'ignore-revoke': { type: 'boolean', default: false },
    },
  });
  const identity = values.identity;
  if (!identity || !values['lease-name'] || !values.kubeconfig) {
    throw new Error('--identity, --lease-name and --kubeconfig are required');
  }
  /** `--ignore-revoke`: revoked shards it keeps working on, with their old tokens. */
  const kept = new Map<number, number>();
  const ignoreRevoke = values['ignore-revoke'];
  /** Shards whose term ended during the current tick's checks (see the tick below). */
  const endedThisTick = new Set<number>();
  const election = new ShardedElection({
    name: values['lease-name'],
    shards: Number(values.shards),
    store: new KubernetesShardLeaseStore({
      kubeConfig: values.kubeconfig,
      namespace: values.namespace,
      identity,
    }),
    identity,
    ...timingsFromFlags(values),
    logger: logEvents(identity),
    callbacks: {
      onShardStarted: (term) => {
        kept.delete(term.shard);
        emit({ event: 'started', identity, shard: term.shard, token: term.token }, () =>
          term.isLive(),
        );
      },
      onShardStopped: (term, reason) => {
        endedThisTick.add(term.shard);
        if (ignoreRevoke && reason === 'revoked') kept.set(term.shard, term.token);
        emit({ event: 'stopped', identity, shard: term.shard, token: term.token, reason });
      },
    },
  });
  let exiting = false;
  const shutdown = async () => {
    if (exiting) return;
    exiting = true;
    await election.stop();
    emit({ event: 'exit', identity, reason: 'signal' });
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
  const fencedDir = values['fenced-dir'];
  const ledger = fencedDir
    ? ((await import(
        new URL('../../../packages/nest-leader/build/examples/fenced-ledger.js', import.meta.url)
          .href
      )) as FencedLedgerModule)
    : undefined;
  const ledgers = new Map<number, DatabaseSync>();
  reportMemoryOnSignal((event) => emit({ ...event, identity }));
  emit({ event: 'ready', identity });
  election.start();
  for (;;) {
    await sleep(UNIT_PERIOD_MS);
    endedThisTick.clear();
    const checked: { shard: number; token: number }[] = [];
    for (const shard of election.ownedShards()) {
      const term = election.shardTerm(shard);
      if (term?.isLive()) checked.push({ shard, token: term.token });
    }
    const coordinator = election.isCoordinator();
    // One shard's check can end the whole epoch (its renew deadline passed), and with it the
    // terms of shards that passed their checks earlier in this tick, whose `stopped` lines are
    // already out: they are not worked on (seed 3604 reported them as work after the term).
    const live = checked.filter(({ shard }) => !endedThisTick.has(shard));
    for (const [shard, token] of kept) {
      if (!live.some((unit) => unit.shard === shard)) live.push({ shard, token });
    }
    const shards = live.map((unit) => unit.shard);
    const tokens = live.map((unit) => unit.token);
    emit({ event: 'units', identity, shards, tokens, coordinator });
    if (ledger) {
      await fencedWrites(
        identity,
        fencedDir!,
        values['pause-file'],
        live,
        ledgers,
        ledger,
        values['quiet-accepted'],
      );
    }
  }
}

await main();
