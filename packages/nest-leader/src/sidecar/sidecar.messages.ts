/**
 * The texts of the `nest-leader-elector` sidecar: usage, flag rules and log lines.
 */

import { errorText } from '../format.js';

/** Messages of the `nest-leader-elector` sidecar CLI. */
export const sidecarMessages = {
  usage: () =>
    [
      'Usage: nest-leader-elector --election <name> [options]',
      '',
      'Elects one leader among the pods running it, on a coordination.k8s.io/v1 Lease.',
      'Flags (compatible with the retired leader-elector:0.5 image):',
      '  --election <name>             Lease name (required)',
      '  --election-namespace <ns>     Lease namespace (default "default")',
      '  --id <identity>               this candidate (default: the hostname, i.e. the pod name)',
      '  --ttl <duration>              lease duration, Go syntax: 10s, 1m, 1500ms (default 10s);',
      '                                renew deadline ttl/2, retry period ttl/4; the Lease holds',
      '                                whole seconds, so the lease duration is ttl rounded up',
      '  --http <host:port>            serve GET / ({"name","last_update"}), /ready, /healthz,',
      '                                and POST /transfer?to=<id> (hand leadership to <id>)',
      '  --leader-file <path>          a file that exists only while this pod leads',
      '  --help                        this text',
    ].join('\n'),
  durationRule:
    'must be a Go duration of at least 1s, such as 10s, 1m30s or 1500ms (units ns, us, ms, s, m, h)',
  httpRule: 'must be host:port or :port, with a port from 0 to 65535',
  requiredRule: 'is required',
  emptyRule: 'must not be empty',
  unknownFlag: (detail: string) => `${detail}\n\nRun nest-leader-elector --help for the flags.`,
  ttlRounded: (ttlMs: number, leaseDurationSeconds: number) =>
    `--ttl ${ttlMs / 1000}s is not a whole number of seconds: the Lease's leaseDurationSeconds ` +
    `is ${leaseDurationSeconds} (rounded up); renew deadline and retry period stay ttl/2 and ttl/4.`,
  starting: (identity: string, lock: string, leaseDurationSeconds: number, http: string) =>
    `nest-leader-elector: candidate "${identity}" on ${lock}, leaseDuration ` +
    `${leaseDurationSeconds}s${http ? `, serving http://${http}/` : ''}.`,
  leaderFileFailed: (path: string, error: unknown) =>
    `Could not update the leader file ${path}: ${errorText(error)}`,
  transferNeedsTarget:
    'POST /transfer needs the query parameter "to": the identity of the candidate to hand ' +
    'leadership to',
  noRoute: (path: string) => `no route ${path}; try /, /ready, /healthz or POST /transfer?to=<id>`,
  stopping: (signal: string) => `nest-leader-elector: ${signal} received; releasing the Lease.`,
} as const;
