/**
 * nest-leader side by side with client-go's own `tools/leaderelection` (the program in
 * `test/client-go-candidate`), both as real OS processes on one real kube-apiserver, with the
 * same timings, in one run:
 *
 * 1. API requests/min in steady state, 3 replicas at 15/10/2, per role (audit log);
 * 2. graceful handover (SIGTERM with release) at 15/10/2 and 4/3/1: p50, p90, p99, max;
 * 3. crash failover (SIGKILL) at 4/3/1: p50, p99, max minus leaseDuration;
 * 4. scale: 10, 30, 100 candidates on one Lease: requests/min per follower, API server CPU.
 *
 * The targets for nest-leader are printed against the figures, met or missed.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildClientGoCandidate,
  type Implementation,
} from '@nest-leader/test/support/candidate-process.js';
import { startControlPlane } from '@nest-leader/test/support/control-plane.js';
import { grantLeaseAccess } from '@nest-leader/test/support/rbac.js';
import type { LeaderElectionTimings } from 'nest-leader';
import { measureApiLoad, type ApiLoadResult } from './compare/api-load.js';
import {
  measureCrashFailovers,
  measureGracefulHandovers,
  type HandoverSeries,
} from './compare/handover.js';
import { measureScale, type ScalePoint } from './compare/scale.js';
import type { Benchmark, BenchSettings } from './support/benchmark.js';
import { writeResults } from './support/results.js';

const IMPLEMENTATIONS: readonly Implementation[] = ['client-go', 'nest-leader'];
const DEFAULT_TIMINGS: LeaderElectionTimings = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};
const FAST_TIMINGS: LeaderElectionTimings = {
  leaseDurationSeconds: 4,
  renewDeadlineSeconds: 3,
  retryPeriodSeconds: 1,
};

/** How much of each comparison a run does. */
interface ComparePlan {
  loadWindowSeconds: number;
  gracefulRounds: number;
  crashRounds: number;
  scaleSizes: number[];
  scaleWindowSeconds: number;
}

const FULL: ComparePlan = {
  loadWindowSeconds: 60,
  gracefulRounds: 30,
  crashRounds: 30,
  scaleSizes: [10, 30, 100],
  scaleWindowSeconds: 20,
};
const QUICK: ComparePlan = {
  loadWindowSeconds: 20,
  gracefulRounds: 4,
  crashRounds: 3,
  scaleSizes: [10, 100],
  scaleWindowSeconds: 10,
};

/** The targets for nest-leader. */
const TARGETS = {
  gracefulP99Ms: 250,
  crashP99PastLeaseMs: 250,
  totalRequestsRatio: 0.55,
  /** "Flat": per-follower load at the largest size ≤ this × at the smallest. */
  followerGrowth: 1.1,
};

interface CompareResults {
  plan: ComparePlan;
  apiLoad: ApiLoadResult;
  graceful: HandoverSeries[];
  crash: HandoverSeries[];
  scale: ScalePoint[];
  targets: TargetCheck[];
  durationSeconds: number;
  clientGoBuildMs: number;
}

interface TargetCheck {
  target: string;
  measured: string;
  met: boolean;
}

export const compareBench: Benchmark = {
  name: 'compare',
  description: 'nest-leader vs client-go, real processes, one API server (≈ 14 min; --quick ≈ 3)',
  settings: ['quick'],
  inDefaultRun: false,
  async run(settings: BenchSettings, command: string): Promise<void> {
    const plan = settings.quick ? QUICK : FULL;
    const startedMs = performance.now();
    const buildStartedMs = performance.now();
    await buildClientGoCandidate();
    const clientGoBuildMs = Math.round(performance.now() - buildStartedMs);

    const cluster = await startControlPlane();
    let controlPlaneStopped = false;
    let results: CompareResults;
    try {
      console.log(`  control plane ready at ${cluster.url}`);
      for (const user of ['alice', 'bob', 'carol', 'dave']) await grantLeaseAccess(cluster, user);
      const server = JSON.parse(readFileSync(join(cluster.stateDir!, 'server.json'), 'utf8')) as {
        pid: number;
      };
      // Interrupted (Ctrl-C): stop the control plane too (candidates are killed on exit).
      const interrupted = () => process.exit(130);
      process.once('SIGINT', interrupted).once('SIGTERM', interrupted);
      process.once('exit', () => {
        if (!controlPlaneStopped) process.kill(server.pid, 'SIGTERM');
      });

      console.log('# 1. API requests in steady state');
      const apiLoad = await measureApiLoad(
        cluster,
        DEFAULT_TIMINGS,
        plan.loadWindowSeconds,
        IMPLEMENTATIONS,
      );
      console.log('# 2. graceful handover');
      const graceful = await measureGracefulHandovers(
        cluster,
        [DEFAULT_TIMINGS, FAST_TIMINGS],
        IMPLEMENTATIONS,
        plan.gracefulRounds,
      );
      console.log('# 3. crash failover');
      const crash = await measureCrashFailovers(
        cluster,
        FAST_TIMINGS,
        IMPLEMENTATIONS,
        plan.crashRounds,
      );
      console.log('# 4. scale');
      const scale = await measureScale(
        cluster,
        server.pid,
        DEFAULT_TIMINGS,
        plan.scaleSizes,
        IMPLEMENTATIONS,
        plan.scaleWindowSeconds,
      );
      results = {
        plan,
        apiLoad,
        graceful,
        crash,
        scale,
        targets: checkTargets(apiLoad, graceful, crash, scale),
        durationSeconds: Math.round((performance.now() - startedMs) / 1000),
        clientGoBuildMs,
      };
    } finally {
      await cluster.stop();
      controlPlaneStopped = true;
      if (cluster.stateDir) rmSync(cluster.stateDir, { recursive: true, force: true });
    }

    const summary = summarize(results);
    const path = writeResults({
      benchmark: settings.quick ? 'compare-quick' : 'compare',
      measures:
        'nest-leader and client-go (tools/leaderelection, LeaseLock) as real processes on one ' +
        'kube-apiserver with the same timings: API requests per role, graceful handover, ' +
        'crash failover, follower load and API server CPU with 10–100 candidates',
      command,
      parameters: {
        plan,
        timings: { default: DEFAULT_TIMINGS, fast: FAST_TIMINGS },
        clientGo: 'k8s.io/client-go v0.36.3 tools/leaderelection + resourcelock.LeaseLock',
        targets: TARGETS,
      },
      results,
      summary,
    });
    console.log(summary.join('\n'));
    console.log(`  → ${path}`);
  },
};

function series(list: HandoverSeries[], impl: Implementation, timings?: LeaderElectionTimings) {
  return list.find(
    (s) =>
      s.implementation === impl &&
      (!timings || s.timings.leaseDurationSeconds === timings.leaseDurationSeconds),
  )!;
}

function checkTargets(
  apiLoad: ApiLoadResult,
  graceful: HandoverSeries[],
  crash: HandoverSeries[],
  scale: ScalePoint[],
): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const timings of [DEFAULT_TIMINGS, FAST_TIMINGS]) {
    const p99 = series(graceful, 'nest-leader', timings).handover.p99Ms;
    checks.push({
      target: `graceful handover p99 ≤ ${TARGETS.gracefulP99Ms} ms at ${label(timings)}`,
      measured: `${p99} ms`,
      met: p99 <= TARGETS.gracefulP99Ms,
    });
  }
  const past = series(crash, 'nest-leader').pastLeaseDuration!.p99Ms;
  checks.push({
    target: `crash failover p99 ≤ leaseDuration + ${TARGETS.crashP99PastLeaseMs} ms`,
    measured: `leaseDuration ${past >= 0 ? '+' : '−'} ${Math.abs(past)} ms`,
    met: past <= TARGETS.crashP99PastLeaseMs,
  });
  checks.push({
    target: `total API requests ≤ ${TARGETS.totalRequestsRatio} × client-go's (3 replicas, 15/10/2)`,
    measured: `${apiLoad.totalRatio} ×`,
    met: apiLoad.totalRatio <= TARGETS.totalRequestsRatio,
  });
  const ours = scale.filter((p) => p.implementation === 'nest-leader');
  const smallest = ours.reduce((a, b) => (a.candidates < b.candidates ? a : b));
  const largest = ours.reduce((a, b) => (a.candidates > b.candidates ? a : b));
  const growth = largest.perFollowerPerMinute / smallest.perFollowerPerMinute;
  checks.push({
    target: `follower load flat from ${smallest.candidates} to ${largest.candidates} candidates (≤ ${TARGETS.followerGrowth} ×)`,
    measured:
      `${smallest.perFollowerPerMinute} → ${largest.perFollowerPerMinute} req/min ` +
      `(${Number.isFinite(growth) ? growth.toFixed(2) : '—'} ×)`,
    met:
      growth <= TARGETS.followerGrowth ||
      largest.perFollowerPerMinute <= smallest.perFollowerPerMinute,
  });
  return checks;
}

function label(t: LeaderElectionTimings): string {
  return `${t.leaseDurationSeconds}/${t.renewDeadlineSeconds}/${t.retryPeriodSeconds}`;
}

function row(cells: readonly (string | number)[]): string {
  return `| ${cells.join(' | ')} |`;
}

function summarize(r: CompareResults): string[] {
  const lines = [
    `compare — nest-leader vs client-go v0.36.3, real processes, one kube-apiserver, ` +
      `${r.durationSeconds} s${r.plan === QUICK ? ' (--quick)' : ''}`,
    '',
    `1. API requests/min in steady state, 3 replicas, ${label(r.apiLoad.timings)}, ${r.apiLoad.windowSeconds} s window (audit log)`,
    row(['implementation', 'leader', 'per follower', 'total', 'follower verbs/min', 'changes']),
    row(['---', '---', '---', '---', '---', '---']),
  ];
  for (const l of r.apiLoad.implementations) {
    const followerVerbs = l.candidates
      .filter((c) => c.role === 'follower')
      .map((c) =>
        Object.entries(c.verbsPerMinute)
          .map(([v, n]) => `${v} ${n}`)
          .join(' '),
      )
      .join('; ');
    lines.push(
      row([
        l.implementation,
        l.leaderPerMinute,
        l.followerPerMinute,
        l.totalPerMinute,
        followerVerbs,
        l.leadershipChanges,
      ]),
    );
  }
  lines.push(`nest-leader / client-go total: ${r.apiLoad.totalRatio} ×`, '');

  lines.push(
    '2. graceful handover (SIGTERM → next started), ms',
    row(['timings', 'implementation', 'n', 'p50', 'p90', 'p99', 'max', 'two leaders']),
    row(['---', '---', '---', '---', '---', '---', '---', '---']),
  );
  for (const s of r.graceful) {
    const h = s.handover;
    lines.push(
      row([
        label(s.timings),
        s.implementation,
        h.n,
        h.medianMs,
        h.p90Ms,
        h.p99Ms,
        h.maxMs,
        s.overlappingTerms,
      ]),
    );
  }
  lines.push('');
  const crashLabel = label(r.crash[0]!.timings);
  lines.push(
    `3. crash failover (SIGKILL → next started) minus leaseDuration, ${crashLabel}, ms`,
    row(['implementation', 'n', 'p50', 'p99', 'max', 'two leaders']),
    row(['---', '---', '---', '---', '---', '---']),
  );
  for (const s of r.crash) {
    const p = s.pastLeaseDuration!;
    lines.push(row([s.implementation, p.n, p.medianMs, p.p99Ms, p.maxMs, s.overlappingTerms]));
  }
  lines.push('');
  lines.push(
    `4. scale, ${label(DEFAULT_TIMINGS)}, ${r.plan.scaleWindowSeconds} s windows`,
    row([
      'candidates',
      'implementation',
      'req/min per follower',
      'follower verbs/min',
      'leader updates/min',
      'API server CPU %',
      'candidates CPU %',
    ]),
    row(['---', '---', '---', '---', '---', '---', '---']),
  );
  for (const p of [...r.scale].sort(
    (a, b) => a.candidates - b.candidates || a.implementation.localeCompare(b.implementation),
  )) {
    const verbs = Object.entries(p.perFollowerVerbsPerMinute)
      .map(([v, n]) => `${v} ${n}`)
      .join(' ');
    lines.push(
      row([
        p.candidates,
        p.implementation,
        p.perFollowerPerMinute,
        verbs,
        p.leaderUpdatesPerMinute,
        p.apiServerCpuPercent,
        p.candidatesCpuPercent,
      ]),
    );
  }
  lines.push('', 'targets (nest-leader):');
  for (const t of r.targets) {
    lines.push(`  ${t.met ? 'met   ' : 'MISSED'} ${t.target}: ${t.measured}`);
  }
  lines.push(
    `client-go candidate build (cached unless its sources changed): ${r.clientGoBuildMs} ms`,
  );
  return lines;
}
