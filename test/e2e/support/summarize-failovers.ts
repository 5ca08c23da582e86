/**
 * Median and max failover times from test/dist/e2e-results/failover.jsonl, over every run
 * recorded there:  node test/dist/e2e/support/summarize-failovers.js
 */
import { existsSync, readFileSync } from 'node:fs';
import { FAILOVER_RESULTS_FILE, type FailoverRecord } from './failover-results.js';

function median(sorted: number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

if (!existsSync(FAILOVER_RESULTS_FILE)) {
  console.log(`no results yet: ${FAILOVER_RESULTS_FILE} (run the e2e tests)`);
} else {
  const records = readFileSync(FAILOVER_RESULTS_FILE, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as FailoverRecord);
  const groups = new Map<string, FailoverRecord[]>();
  for (const r of records) {
    const key = `${r.backend} ${r.signal} (leaseDuration ${r.leaseDurationSeconds} s, retryPeriod ${r.retryPeriodSeconds} s)`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  console.log(`${records.length} failovers from ${new Set(records.map((r) => r.run)).size} runs`);
  for (const [key, rows] of groups) {
    const acquired = rows.map((r) => r.acquiredMs).sort((a, b) => a - b);
    const firstWork = rows.map((r) => r.firstWorkMs).sort((a, b) => a - b);
    const judged = rows.filter((r) => r.withinIssueTarget !== undefined);
    const missed = judged.filter((r) => !r.withinIssueTarget).length;
    console.log(
      `${key}: n=${rows.length}; new leader median ${median(acquired)} ms, max ${acquired.at(-1)} ms; ` +
        `first leader-work median ${median(firstWork)} ms, max ${firstWork.at(-1)} ms` +
        (judged.length ? `; over the issue's target ${missed}/${judged.length}` : ''),
    );
  }
}
