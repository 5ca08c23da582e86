/**
 * The JSON report of a chaos run: settings, the bound of every fault kind, every fault applied,
 * every transition with its gap, gaps per fault kind (p50 / p99 / max), violations. Pure.
 */
import {
  type BoundAllowances,
  type ChaosTimings,
  FAULT_KINDS,
  FAULT_SPECS,
  type FaultKind,
  gapBoundMs,
} from './fault-kinds.js';
import type {
  ChaosFaultKind,
  ChaosVerdict,
  FaultRecord,
  SlotFigures,
  TransitionRecord,
  Violation,
} from './invariant-checker.js';

/** Distribution of gaps, ms. */
export interface GapStats {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export interface FaultKindSummary {
  /** Faults of this kind applied. */
  faults: number;
  /** Transitions whose gap began in a round of this kind. */
  transitions: number;
  /** Leaderless gaps of those transitions. */
  gapMs: GapStats;
  /** The bound (for API faults: with the largest measured downtime). */
  boundMs: number;
  boundFormula: string;
  action: string;
  reasoning: string;
}

export interface ChaosReport {
  seed: number;
  command: string;
  startedAt: string;
  endedAt: string;
  durationSeconds: number;
  replicas: number;
  timings: ChaosTimings;
  allowances: BoundAllowances;
  /** Setup time by step (toxiproxy build/start, control plane, RBAC, links), ms. */
  setupMs: Record<string, number>;
  toxiproxyVersion: string;
  /** What ran, for the picture's subtitle (default: the process tier's replicas and toxiproxy). */
  setting?: string;
  transitions: number;
  terms: number;
  processes: number;
  probes: number;
  byFault: Partial<Record<ChaosFaultKind | 'startup', FaultKindSummary>>;
  violations: Violation[];
  /** Acquisition lines written after their term had ended (see `ChaosVerdict`); 0 in older reports. */
  lateAnnouncements?: number;
  /** The demo's `dispatch-jobs` slots (catch-up `'all'`): due, late, begun twice, excused, lost. */
  slots?: SlotFigures;
  /** The demo's second election (its own Lease), judged on the same rounds. */
  namedElection?: {
    terms: number;
    transitions: number;
    gapMs: GapStats;
    byFault: Partial<Record<FaultKind | 'startup', { transitions: number; gapMs: GapStats }>>;
  };
  faults: FaultRecord[];
  transitionLog: TransitionRecord[];
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function gapStats(values: readonly number[]): GapStats {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    p50: Math.round(percentile(sorted, 50)),
    p99: Math.round(percentile(sorted, 99)),
    max: Math.round(sorted.at(-1) ?? 0),
  };
}

export interface ReportInput {
  seed: number;
  command: string;
  startedAt: number;
  endedAt: number;
  replicas: number;
  timings: ChaosTimings;
  allowances: BoundAllowances;
  setupMs: Record<string, number>;
  toxiproxyVersion: string;
  faults: FaultRecord[];
  verdict: ChaosVerdict;
  /** The verdict on the demo's second election, if judged. */
  shard?: ChaosVerdict;
  processes: number;
  probes: number;
  /** What ran, for the picture's subtitle. */
  setting?: string;
  /** The fault catalogue the run drew from; default the process-level one ({@link FAULT_SPECS}). */
  catalogue?: FaultCatalogue;
}

/** A tier's fault kinds, what each does and its gap bound (ms) under the run's timings. */
export interface FaultCatalogue {
  kinds: readonly ChaosFaultKind[];
  describe(kind: ChaosFaultKind): { action: string; boundFormula: string; reasoning: string };
  boundMs(kind: ChaosFaultKind | 'startup'): number;
}

function processCatalogue(timings: ChaosTimings, allowances: BoundAllowances): FaultCatalogue {
  return {
    kinds: FAULT_KINDS,
    describe: (kind) => FAULT_SPECS[kind as FaultKind],
    boundMs: (kind) => gapBoundMs(kind as FaultKind | 'startup', timings, allowances),
  };
}

export function buildChaosReport(input: ReportInput): ChaosReport {
  const { verdict, faults, timings, allowances } = input;
  const catalogue = input.catalogue ?? processCatalogue(timings, allowances);
  const byFault: ChaosReport['byFault'] = {};
  for (const kind of [...catalogue.kinds, 'startup'] as const) {
    const ofKind = faults.filter((f) => f.kind === kind);
    const transitions = verdict.transitions.filter((t) => t.cause === kind && t.from);
    if (ofKind.length === 0 && transitions.length === 0) continue;
    const spec = kind === 'startup' ? undefined : catalogue.describe(kind);
    const boundMs = Math.max(catalogue.boundMs(kind), ...ofKind.map((f) => f.boundMs));
    byFault[kind] = {
      faults: ofKind.length,
      transitions: transitions.length,
      gapMs: gapStats(transitions.map((t) => t.gapMs)),
      boundMs: Math.round(boundMs),
      boundFormula: spec?.boundFormula ?? 'L + J·R + H + S',
      action: spec?.action ?? 'the first election',
      reasoning: spec?.reasoning ?? 'nobody holds the Lease yet',
    };
  }
  return {
    seed: input.seed,
    command: input.command,
    startedAt: new Date(input.startedAt).toISOString(),
    endedAt: new Date(input.endedAt).toISOString(),
    durationSeconds: Math.round((input.endedAt - input.startedAt) / 1000),
    replicas: input.replicas,
    timings,
    allowances,
    setupMs: input.setupMs,
    toxiproxyVersion: input.toxiproxyVersion,
    ...(input.setting && { setting: input.setting }),
    transitions: verdict.transitions.filter((t) => t.from).length,
    terms: verdict.terms.length,
    processes: input.processes,
    probes: input.probes,
    byFault,
    violations: verdict.violations,
    lateAnnouncements: verdict.lateAnnouncements,
    ...(verdict.slots && { slots: verdict.slots }),
    namedElection: input.shard && summarizeElection(input.shard),
    faults,
    transitionLog: verdict.transitions,
  };
}

function summarizeElection(verdict: ChaosVerdict): NonNullable<ChaosReport['namedElection']> {
  const transitions = verdict.transitions.filter((t) => t.from);
  const byFault: NonNullable<ChaosReport['namedElection']>['byFault'] = {};
  for (const kind of [...FAULT_KINDS, 'startup'] as const) {
    const ofKind = transitions.filter((t) => t.cause === kind);
    if (ofKind.length > 0) {
      byFault[kind] = { transitions: ofKind.length, gapMs: gapStats(ofKind.map((t) => t.gapMs)) };
    }
  }
  return {
    terms: verdict.terms.length,
    transitions: transitions.length,
    gapMs: gapStats(transitions.map((t) => t.gapMs)),
    byFault,
  };
}
