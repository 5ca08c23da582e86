/**
 * The picture of a chaos run, rendered to SVG with Vega-Lite (compiled) and Vega (rendered
 * headless in Node): a timeline of who led when (one row per replica slot, one bar per term),
 * the faults as they were applied (a row of their own, colored by kind), and every leaderless
 * gap (red when over its fault's bound); below it, the gaps per fault kind against their bounds.
 */
import * as vega from 'vega';
import * as vl from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';
import type { ChaosReport } from './chaos-report.js';
import { FAULT_KINDS } from './fault-kinds.js';
import { POD_FAULT_KINDS } from './pod-fault-kinds.js';
import type { TermRecord } from './invariant-checker.js';

const FAULTS_ROW = 'faults';
const GAPS_ROW = 'no leader';

/** Builds the Vega-Lite spec of the picture. */
export function timelineSpec(
  report: ChaosReport,
  terms: readonly TermRecord[],
  options: { width?: number } = {},
): TopLevelSpec {
  const t0 = Date.parse(report.startedAt);
  const s = (ms: number) => Math.round((ms - t0) / 10) / 100;
  const slots = [...new Set(terms.map((t) => t.slot))].sort((a, b) => a - b);
  const rowOf = (t: TermRecord) =>
    t.slot >= report.replicas ? `slot ${t.slot + 1} (same identity)` : t.identity;
  const rows = [
    FAULTS_ROW,
    ...new Set(slots.map((slot) => rowOf(terms.find((t) => t.slot === slot)!))),
    GAPS_ROW,
  ];
  const termData = terms.map((t) => ({
    row: rowOf(t),
    start: s(t.start),
    end: Math.max(s(t.end), s(t.start) + 0.05),
    token: t.token,
    instance: t.instance,
    what: 'term',
  }));
  const faultData = report.faults.map((f) => ({
    row: FAULTS_ROW,
    start: s(f.startAt),
    end: Math.max(s(f.endAt), s(f.startAt) + 0.2),
    kind: f.kind,
    round: f.round,
  }));
  const gapData = report.transitionLog
    .filter((t) => t.from && t.gapMs > 0)
    .map((t) => ({
      row: GAPS_ROW,
      start: s(t.gapStartAt),
      end: s(t.gapStartAt + t.gapMs),
      gapMs: Math.round(t.gapMs),
      cause: t.cause,
      over: t.gapMs > t.boundMs ? 'over its bound' : 'within its bound',
    }));
  const violationData = report.violations.map((v) => ({ at: s(v.at), kind: v.kind }));
  const summary = Object.entries(report.byFault)
    .filter(([kind]) => kind !== 'startup')
    .flatMap(([kind, f]) => [
      { kind, measure: 'p50', ms: f!.gapMs.p50, boundMs: f!.boundMs, n: f!.transitions },
      { kind, measure: 'max', ms: f!.gapMs.max, boundMs: f!.boundMs, n: f!.transitions },
    ]);
  const durationS = Math.max(1, report.durationSeconds);
  const v = report.violations.length;
  const overviewWidth = options.width ?? Math.min(3000, Math.max(1100, Math.round(durationS * 3)));
  const panel = (from: number, to: number, width: number, title: string, legends = true) => {
    const within = <D extends { start: number; end: number }>(rows: D[]) =>
      rows.filter((d) => d.end >= from && d.start <= to);
    const x = {
      field: 'start',
      type: 'quantitative' as const,
      title: 'seconds since the run started',
      scale: { domain: [from, to] },
    };
    const y = {
      field: 'row',
      type: 'nominal' as const,
      sort: rows,
      title: null,
      axis: { labelFontSize: 13, labelLimit: 260 },
    };
    return {
      width,
      height: 40 * rows.length,
      title: { text: title, fontSize: 14, anchor: 'start' as const },
      layer: [
        {
          data: { values: within(termData) },
          mark: { type: 'bar' as const, height: 22, color: '#2f7ed8', clip: true },
          encoding: {
            x,
            x2: { field: 'end' },
            y,
            tooltip: [{ field: 'instance' }, { field: 'token' }, { field: 'start' }],
          },
        },
        {
          data: { values: within(faultData) },
          mark: { type: 'bar' as const, height: 22, clip: true },
          encoding: {
            x,
            x2: { field: 'end' },
            y,
            color: {
              field: 'kind',
              type: 'nominal' as const,
              title: 'fault',
              scale: {
                scheme: 'tableau20',
                domain: [...FAULT_KINDS, ...POD_FAULT_KINDS, 'unsafe-intruder'],
              },
              legend: legends
                ? { columns: 3, labelFontSize: 12, titleFontSize: 13, labelLimit: 200 }
                : null,
            },
            tooltip: [{ field: 'kind' }, { field: 'round' }],
          },
        },
        {
          data: { values: within(gapData) },
          mark: { type: 'bar' as const, height: 22, clip: true },
          encoding: {
            x,
            x2: { field: 'end' },
            y,
            fill: {
              field: 'over',
              type: 'nominal' as const,
              title: 'leaderless gap',
              scale: {
                domain: ['within its bound', 'over its bound'],
                range: ['#f4a582', '#b2182b'],
              },
              legend: legends ? { labelFontSize: 12, titleFontSize: 13 } : null,
            },
            tooltip: [{ field: 'cause' }, { field: 'gapMs' }],
          },
        },
        {
          data: {
            values: violationData.filter((d) => d.at >= from && d.at <= to),
          },
          mark: {
            type: 'rule' as const,
            color: '#b2182b',
            strokeWidth: 2,
            strokeDash: [4, 2],
            clip: true,
          },
          encoding: {
            x: { field: 'at', type: 'quantitative' as const, scale: { domain: [from, to] } },
          },
        },
      ],
    };
  };
  const firstFault = faultData[0]?.start ?? 0;
  const detailTo = Math.min(durationS, firstFault + 150);
  const panels =
    durationS > 300
      ? [
          panel(
            0,
            durationS,
            overviewWidth,
            'the whole run: who led when (blue), faults, leaderless gaps, violations (dashed red)',
          ),
          panel(
            Math.max(0, firstFault - 5),
            detailTo,
            1400,
            `detail: the first ${Math.round(detailTo - firstFault)} s of faults`,
            false,
          ),
        ]
      : [
          panel(
            0,
            durationS,
            overviewWidth,
            'who led when (blue), faults, leaderless gaps, violations (dashed red)',
          ),
        ];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: 'white',
    padding: 16,
    title: {
      text: `nest-leader chaos run — seed ${report.seed}: ${report.transitions} transitions, ${report.faults.length} faults, ${v} violation${v === 1 ? '' : 's'}`,
      subtitle: `${report.setting ?? `${report.replicas} demo replicas on a real kube-apiserver through toxiproxy`} · leaseDuration ${report.timings.leaseDurationMs / 1000} s, renewDeadline ${report.timings.renewDeadlineMs / 1000} s, retryPeriod ${report.timings.retryPeriodMs / 1000} s · ${Math.round(durationS / 60)} min`,
      fontSize: 18,
      subtitleFontSize: 13,
      anchor: 'start',
    },
    vconcat: [
      ...panels,
      {
        width: 900,
        height: 24 * Math.max(1, summary.length / 2),
        title: {
          text: 'leaderless gap per fault kind: p50 and max (bars), bound (black tick), transitions (n)',
          fontSize: 14,
          anchor: 'start',
        },
        data: { values: summary },
        layer: [
          {
            mark: { type: 'bar', height: 9 },
            encoding: {
              y: {
                field: 'kind',
                type: 'nominal',
                title: null,
                axis: { labelFontSize: 12, labelLimit: 200 },
              },
              yOffset: { field: 'measure', type: 'nominal', sort: ['p50', 'max'] },
              x: { field: 'ms', type: 'quantitative', title: 'ms' },
              color: {
                field: 'measure',
                type: 'nominal',
                title: 'gap',
                scale: { domain: ['p50', 'max'], range: ['#92c5de', '#2166ac'] },
              },
              tooltip: [{ field: 'kind' }, { field: 'measure' }, { field: 'ms' }, { field: 'n' }],
            },
          },
          {
            mark: { type: 'tick', color: 'black', thickness: 3, size: 20 },
            encoding: {
              y: { field: 'kind', type: 'nominal' },
              x: { field: 'boundMs', type: 'quantitative' },
            },
          },
          {
            mark: { type: 'text', align: 'left', dx: 6, fontSize: 11 },
            transform: [{ filter: "datum.measure === 'max'" }],
            encoding: {
              y: { field: 'kind', type: 'nominal' },
              x: { field: 'boundMs', type: 'quantitative' },
              text: { field: 'n', type: 'quantitative', format: 'd', title: 'n' },
            },
          },
        ],
      },
    ],
    resolve: {
      scale: { color: 'independent', x: 'independent' },
      legend: { color: 'independent', fill: 'independent' },
    },
    config: { view: { stroke: '#ddd' }, axis: { labelFontSize: 12, titleFontSize: 13 } },
  } as TopLevelSpec;
}

/** Renders the picture to an SVG string. */
export async function renderTimelineSvg(
  report: ChaosReport,
  terms: readonly TermRecord[],
): Promise<string> {
  const compiled = vl.compile(timelineSpec(report, terms)).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
