/** The human summary of a chaos report: one line per fault kind, then every violation. */
import type { ChaosReport } from './chaos-report.js';

const sec = (ms: number) => (ms / 1000).toFixed(2);

export function formatSummary(report: ChaosReport): string {
  const rows = [
    ['fault', 'applied', 'transitions', 'gap p50 s', 'p99 s', 'max s', 'bound s'],
    ...Object.entries(report.byFault).map(([kind, f]) => [
      kind,
      String(f!.faults),
      String(f!.transitions),
      sec(f!.gapMs.p50),
      sec(f!.gapMs.p99),
      sec(f!.gapMs.max),
      sec(f!.boundMs),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const table = rows
    .map((r) =>
      r
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  '),
    )
    .join('\n');
  const head =
    `seed ${report.seed}: ${report.transitions} transitions, ${report.faults.length} faults, ` +
    `${report.terms} terms, ${report.processes} processes, ${report.probes} probes in ` +
    `${Math.round(report.durationSeconds / 6) / 10} min`;
  const named = report.namedElection
    ? `\nsecond election (the demo's shard-a Lease, same rounds): ${report.namedElection.terms} terms, ` +
      `${report.namedElection.transitions} transitions, gap p50 ${sec(report.namedElection.gapMs.p50)} s, ` +
      `max ${sec(report.namedElection.gapMs.max)} s`
    : '';
  const slots = report.slots
    ? `\ndispatch-jobs slots (catchUp 'all'): ${report.slots.due} due, ${report.slots.onTime} on time, ` +
      `${report.slots.late} caught up, ${report.slots.lost} lost, ${report.slots.begunTwice} begun twice ` +
      `(${report.slots.redone} redone by a later term), ${report.slots.excused} excused (no leader live ` +
      `within the horizon, or the Lease deleted)`
    : '';
  const late = report.lateAnnouncements
    ? `\n${report.lateAnnouncements} term start(s) announced after the term had ended (a pause between ` +
      `the library's check and the line): no span, no work under them`
    : '';
  const violations =
    report.violations.length === 0
      ? '0 violations: no overlapping terms, no work after a term ended, tokens increasing, every gap within its bound, no crash or wedge, no scheduled slot lost or unlabelled'
      : `${report.violations.length} VIOLATIONS:\n${report.violations
          .map((v) => `  [${v.kind}] round ${v.round ?? '-'}: ${v.message}`)
          .join('\n')}`;
  return `${head}\n${table}${named}${slots}${late}\n${violations}`;
}
