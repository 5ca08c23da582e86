/**
 * A deliberately UNSAFE candidate of the candidate harness ({@link CandidateProcess} with
 * `implementation: 'unsafe'`), for the checkers' positive controls: it has the two bugs of naive
 * Lease-election packages, which the library's design rules out —
 *
 * - it judges expiry by the remote `renewTime` against its own wall clock (a Lease is free when
 *   `Date.now() + skew > renewTime + leaseDurationSeconds`), where client-go and this library
 *   measure the time since they last saw the record change on their own monotonic clock;
 * - it never steps down at renewDeadline: a failed or missed renewal keeps it leading; it stops
 *   only when a read of the Lease shows another holder.
 *
 * Same flags and JSON-lines events as `nest-leader-candidate.ts` (`ready`, `new-leader`,
 * `started`, `stopped`, `exit`, with `leaseTransitions` as its token), plus `--clock-skew-ms N`
 * (its wall clock reads N ms ahead). While it believes it leads it does a unit of work every
 * 100 ms (`unit-done`, as `--work-units` there) with no check but its own belief, so a checker
 * that reads work lines sees what a paused or skewed leader of this kind really does.
 * Every retryPeriod it reads the Lease and renews, takes or leaves it. Never use it outside tests.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CoordinationV1Api, KubeConfig, V1MicroTime, type V1Lease } from '@kubernetes/client-node';
import type { CandidateEvent } from './candidate-process.js';
import { CANDIDATE_FLAG_OPTIONS, timingsFromFlags } from './candidate-flags.js';
import { monotonicNowMs } from './monotonic-time.js';

const { values } = parseArgs({
  options: { ...CANDIDATE_FLAG_OPTIONS, 'clock-skew-ms': { type: 'string', default: '0' } },
});
const identity = values.identity!;
const name = values['lease-name']!;
const namespace = values.namespace;
if (!identity || !name || !values.kubeconfig) {
  throw new Error('--lease-name, --identity and --kubeconfig are required');
}
const skewMs = Number(values['clock-skew-ms']);
const timings = timingsFromFlags(values);
const retryPeriodMs = timings.retryPeriodSeconds * 1000;

function emit(event: CandidateEvent['event'], fields: Partial<CandidateEvent> = {}): void {
  const line: CandidateEvent = {
    event,
    identity,
    ...fields,
    monotonicMs: monotonicNowMs(),
    time: new Date().toISOString(),
  };
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

const kubeConfig = new KubeConfig();
kubeConfig.loadFromString(readFileSync(values.kubeconfig, 'utf8'));
const api = kubeConfig.makeApiClient(CoordinationV1Api);

/** Its own wall clock, skewed: what the bug compares the remote renewTime with. */
const wallNow = () => new Date(Date.now() + skewMs);
const microNow = () => new V1MicroTime(wallNow().getTime());

let leading: { token: number; unit: number } | undefined;
let observedHolder: string | undefined;

function lead(token: number): void {
  leading = { token, unit: 0 };
  emit('started', { leaseTransitions: token });
}

async function readLease(): Promise<V1Lease | undefined> {
  try {
    return await api.readNamespacedLease({ name, namespace });
  } catch (error) {
    if ((error as { code?: number }).code === 404) return undefined;
    throw error;
  }
}

/** One round: read, then renew (holder), take (expired by its wall clock) or leave it. */
async function round(): Promise<void> {
  const lease = await readLease();
  if (!lease) {
    await api.createNamespacedLease({
      namespace,
      body: {
        metadata: { name, namespace },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: timings.leaseDurationSeconds,
          acquireTime: microNow(),
          renewTime: microNow(),
          leaseTransitions: 0,
        },
      },
    });
    return lead(0);
  }
  const spec = lease.spec ?? {};
  const holder = spec.holderIdentity ?? '';
  if (holder !== observedHolder) {
    observedHolder = holder;
    emit('new-leader', { leader: holder });
  }
  if (holder === identity) {
    lease.spec = { ...spec, renewTime: microNow() };
    await api.replaceNamespacedLease({ name, namespace, body: lease });
    if (!leading) lead(spec.leaseTransitions ?? 0);
    return;
  }
  if (leading) {
    // The only way it steps down: it read another holder.
    emit('stopped', { leaseTransitions: leading.token });
    leading = undefined;
  }
  // THE BUG: the remote renewTime against the local wall clock.
  const renewedAtMs = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
  const expired =
    holder === '' || wallNow().getTime() > renewedAtMs + (spec.leaseDurationSeconds ?? 15) * 1000;
  if (!expired) return;
  const token = (spec.leaseTransitions ?? 0) + 1;
  lease.spec = {
    ...spec,
    holderIdentity: identity,
    leaseDurationSeconds: timings.leaseDurationSeconds,
    acquireTime: microNow(),
    renewTime: microNow(),
    leaseTransitions: token,
  };
  await api.replaceNamespacedLease({ name, namespace, body: lease });
  lead(token);
}

let busy = false;
const rounds = setInterval(() => {
  if (busy) return;
  busy = true;
  // THE OTHER BUG: a failed round (409, timeout, API down) changes nothing, however long.
  round()
    .catch(() => undefined)
    .finally(() => (busy = false));
}, retryPeriodMs);
const units = setInterval(() => {
  if (!leading) return;
  leading.unit += 1;
  emit('unit-done', { token: leading.token, unit: leading.unit });
}, 100);

process.once('SIGTERM', () => {
  clearInterval(rounds);
  clearInterval(units);
  if (leading) emit('stopped', { leaseTransitions: leading.token });
  emit('exit', { reason: 'signal' });
  process.exit(0);
});
emit('ready');
