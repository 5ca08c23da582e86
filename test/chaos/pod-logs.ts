/**
 * The pods' own log lines (collected by `test/support/pod-log-collector.ts`) as the chaos
 * checker's input: one process per container run (`<pod>#<restartCount>`), its identity the pod
 * name (the demo's holderIdentity), its events the JSON lines it printed. One node, one clock:
 * the events' own `at` times are comparable. Pure.
 */
import type { DemoEvent } from '@nest-leader/demo/demo-events';
import type { PodLogLine } from '../support/pod-log-collector.js';
import type { ProcessLog } from './invariant-checker.js';

/** A line that is a demo event: JSON with an `event` name and an `at` time. */
function demoEvent(line: string): DemoEvent | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(line) as Partial<DemoEvent>;
    return typeof value.event === 'string' && typeof value.at === 'string'
      ? (value as DemoEvent)
      : undefined;
  } catch {
    return undefined; // a line cut by a kill is not JSON; the rest of the log still counts
  }
}

/**
 * The lines of each container run (`<pod>#<restartCount>`, in order of first appearance), one
 * run read twice kept once. The collector follows the restart count the pod's status names,
 * and a status read just after a node restart can still name the run before while `kubectl
 * logs` already streams the new one: the new run's lines arrive under both counts (pod chaos
 * seed 3352, after a cluster restart: one pod's term judged as two processes in one term, 74
 * violations). A run whose lines begin like another run of the same pod and are a prefix of
 * it, or it of them, is that run: its longer reading is kept, under the first count seen. The
 * first line carries the Nest logger's millisecond stamp, so two runs never share it.
 */
function containerRuns(
  lines: readonly PodLogLine[],
): Map<string, { pod: string; lines: string[] }> {
  const runs = new Map<string, { pod: string; lines: string[] }>();
  for (const { pod, restartCount, line } of lines) {
    const instance = `${pod}#${restartCount}`;
    let run = runs.get(instance);
    if (!run) runs.set(instance, (run = { pod, lines: [] }));
    run.lines.push(line);
  }
  const kept = new Map<string, { pod: string; lines: string[] }>();
  for (const [instance, run] of runs) {
    const same = [...kept.values()].find(
      (other) =>
        other.pod === run.pod &&
        (isPrefix(other.lines, run.lines) || isPrefix(run.lines, other.lines)),
    );
    if (!same) kept.set(instance, run);
    else if (run.lines.length > same.lines.length) same.lines = run.lines;
  }
  return kept;
}

/** Whether `a` is a prefix of `b`. */
function isPrefix(a: readonly string[], b: readonly string[]): boolean {
  return a.length <= b.length && a.every((line, i) => line === b[i]);
}

/**
 * One {@link ProcessLog} per container run ({@link containerRuns}), in order of first
 * appearance; each pod is one row (`slot`) of the picture.
 */
export function podProcessLogs(lines: readonly PodLogLine[]): ProcessLog[] {
  const processes: ProcessLog[] = [];
  const rows = new Map<string, number>();
  for (const [instance, run] of containerRuns(lines)) {
    const events = run.lines.map(demoEvent).filter((e): e is DemoEvent => e !== undefined);
    if (events.length === 0) continue;
    if (!rows.has(run.pod)) rows.set(run.pod, rows.size);
    processes.push({
      instance,
      identity: run.pod,
      slot: rows.get(run.pod)!,
      events,
      spawnedAt: Date.parse(events[0]!.at),
    });
  }
  return processes;
}
