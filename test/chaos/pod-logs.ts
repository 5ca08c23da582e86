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
 * One {@link ProcessLog} per container run, in order of first appearance; each pod is one row
 * (`slot`) of the picture.
 */
export function podProcessLogs(lines: readonly PodLogLine[]): ProcessLog[] {
  const byInstance = new Map<string, { pod: string; events: DemoEvent[] }>();
  const rows = new Map<string, number>();
  for (const { pod, restartCount, line } of lines) {
    const event = demoEvent(line);
    if (!event) continue;
    const instance = `${pod}#${restartCount}`;
    if (!rows.has(pod)) rows.set(pod, rows.size);
    let entry = byInstance.get(instance);
    if (!entry) byInstance.set(instance, (entry = { pod, events: [] }));
    entry.events.push(event);
  }
  return [...byInstance].map(([instance, { pod, events }]) => ({
    instance,
    identity: pod,
    slot: rows.get(pod)!,
    events,
    spawnedAt: Date.parse(events[0]!.at),
  }));
}
