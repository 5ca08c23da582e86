/**
 * Failover times measured by the end-to-end tests, kept so the numbers can be reported:
 * appended as JSON lines to test/dist/e2e-results/failover.jsonl (one line per measurement,
 * every run) and summarized per run on stdout.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FailoverMeasurement } from '@nest-leader/demo/launcher/replica-fleet';

/** test/dist/e2e-results/failover.jsonl (this file runs from test/dist/e2e/support). */
export const FAILOVER_RESULTS_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../e2e-results/failover.jsonl',
);

/** One line of the results file. */
export interface FailoverRecord {
  /** The test run (process start time), to group lines per run. */
  run: string;
  /** The lock behind the Lease: `file` or `kubernetes`. */
  backend: string;
  signal: string;
  acquiredMs: number;
  firstWorkMs: number;
  leaseDurationSeconds: number;
  retryPeriodSeconds: number;
  /** The issue's target for this signal (first leader-work after SIGKILL, new leader after SIGTERM). */
  issueTargetMs: number;
  withinIssueTarget: boolean;
  at: string;
}

const run = new Date(Date.now() - performance.now()).toISOString();

/** Appends one measurement to the results file and returns the line written. */
export function recordFailover(
  backend: string,
  measurement: FailoverMeasurement,
  timings: { leaseDurationSeconds: number; retryPeriodSeconds: number },
  issueTargetMs: number,
): FailoverRecord {
  const measured =
    measurement.signal === 'SIGKILL' ? measurement.firstWorkMs : measurement.acquiredMs;
  const record: FailoverRecord = {
    run,
    backend,
    signal: measurement.signal,
    acquiredMs: Math.round(measurement.acquiredMs),
    firstWorkMs: Math.round(measurement.firstWorkMs),
    leaseDurationSeconds: timings.leaseDurationSeconds,
    retryPeriodSeconds: timings.retryPeriodSeconds,
    issueTargetMs,
    withinIssueTarget: measured <= issueTargetMs,
    at: new Date().toISOString(),
  };
  mkdirSync(dirname(FAILOVER_RESULTS_FILE), { recursive: true });
  appendFileSync(FAILOVER_RESULTS_FILE, `${JSON.stringify(record)}\n`);
  return record;
}
