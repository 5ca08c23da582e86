/** The flags every candidate program of the candidate harness takes (see `candidate-process.ts`). */
import type { LeaderElectionTimings } from 'nest-leader';

/** `parseArgs` options of the shared flags, with client-go's defaults. */
export const CANDIDATE_FLAG_OPTIONS = {
  kubeconfig: { type: 'string', default: process.env.KUBECONFIG },
  'lease-name': { type: 'string' },
  namespace: { type: 'string', default: 'default' },
  identity: { type: 'string' },
  candidates: { type: 'string', default: '1' },
  'lease-duration': { type: 'string', default: '15s' },
  'renew-deadline': { type: 'string', default: '10s' },
  'retry-period': { type: 'string', default: '2s' },
  'release-on-cancel': { type: 'string', default: 'true' },
  /** nest-leader only: the candidate's `podTemplateHash` (advertised for handoff preference). */
  'pod-template-hash': { type: 'string' },
  /** nest-leader only: the candidate's `priority`, a whole number. */
  priority: { type: 'string' },
} as const;

/** `15s`, `1.5s`, `500ms` → ms, as Go's time.ParseDuration for the forms the tests use. */
function parseDurationMs(flag: string, value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(value);
  if (!match) throw new Error(`--${flag} must look like 15s or 500ms, got "${value}"`);
  return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
}

/** The timings the duration flags give. */
export function timingsFromFlags(values: {
  'lease-duration': string;
  'renew-deadline': string;
  'retry-period': string;
}): LeaderElectionTimings {
  return {
    leaseDurationSeconds: parseDurationMs('lease-duration', values['lease-duration']) / 1000,
    renewDeadlineSeconds: parseDurationMs('renew-deadline', values['renew-deadline']) / 1000,
    retryPeriodSeconds: parseDurationMs('retry-period', values['retry-period']) / 1000,
  };
}
