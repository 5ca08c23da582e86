/**
 * The texts of the `nest-leader-elector` sidecar: usage, flag rules and log lines.
 */

import { boundedText, errorText } from 'nest-leader/core';

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
      '  --http <host:port>            serve GET / ({"name","last_update"}), /ready, /healthz',
      '                                (read-only; :port listens on every interface)',
      '  --transfer-http <host:port>   also serve POST /transfer (hand leadership to another',
      '                                candidate); off by default; :port means 127.0.0.1:port;',
      '                                a non-loopback host needs --transfer-token-file',
      '  --transfer-token-file <path>  POST /transfer must send "Authorization: Bearer <token>",',
      "                                the token being this file's contents (16+ characters)",
      '  --leader-file <path>          a file that exists only while this pod leads',
      '  --help                        this text',
    ].join('\n'),
  durationRule:
    'must be a Go duration of at least 1s, such as 10s, 1m30s or 1500ms (units ns, us, ms, s, m, h)',
  httpRule: 'must be host:port or :port, with a port from 0 to 65535',
  transferHttpNeedsToken:
    'listens beyond loopback, so it needs --transfer-token-file: anyone who reaches a ' +
    'transfer address without a token could choose the leader',
  tokenFileNeedsTransfer: 'is only meaningful with --transfer-http',
  tokenFileUnreadable: (code: string) => `must name a readable file (reading it failed: ${code})`,
  tokenRule: (minLength: number, maxBytes: number) =>
    `must hold one token of at least ${minLength} printable ASCII characters without spaces ` +
    `(surrounding whitespace ignored), in a file of at most ${maxBytes} bytes`,
  // The text selectLock() gives a 'kubernetes' lock without a cluster, as the sidecar always
  // answered it.
  noClusterRule:
    "'kubernetes' needs a cluster: none found (KUBECONFIG unset, no in-cluster ServiceAccount " +
    "token or KUBERNETES_SERVICE_HOST, no ~/.kube/config); pass kubeConfig, or use lock 'file' " +
    'outside Kubernetes',
  requiredRule: 'is required',
  emptyRule: 'must not be empty',
  unknownFlag: (detail: string) => `${detail}\n\nRun nest-leader-elector --help for the flags.`,
  ttlRounded: (ttlMs: number, leaseDurationSeconds: number) =>
    `--ttl ${ttlMs / 1000}s is not a whole number of seconds: the Lease's leaseDurationSeconds ` +
    `is ${leaseDurationSeconds} (rounded up); renew deadline and retry period stay ttl/2 and ttl/4.`,
  starting: (
    identity: string,
    lock: string,
    leaseDurationSeconds: number,
    http: string,
    transfer: string,
  ) =>
    `nest-leader-elector: candidate "${identity}" on ${lock}, leaseDuration ` +
    `${leaseDurationSeconds}s${http ? `, serving http://${http}/` : ''}` +
    `${transfer ? `, transfers on http://${transfer}/transfer` : ''}.`,
  leaderFileFailed: (path: string, error: unknown) =>
    `Could not update the leader file ${path}: ${errorText(error)}`,
  noRoute: 'no such route; try GET /, /ready or /healthz',
  getOnly: 'GET only',
  internalError: 'internal error; see the sidecar log',
  requestFailed: (server: string, error: unknown) =>
    `${server}: a request failed (answered 500): ${boundedText(errorText(error))}`,
  serverError: (server: string, error: unknown) =>
    `${server}: the HTTP server reported an error: ${boundedText(errorText(error))}`,
  unhealthy: (reason: string) => `GET /healthz answers 503: ${boundedText(reason)}`,
  transferElsewhere:
    'POST /transfer is not served on --http: start the sidecar with --transfer-http ' +
    '(off by default; loopback unless a token is set) and send it there',
  transferNoRoute: 'no such route; this address serves POST /transfer only',
  postOnly: 'POST only',
  transferUnauthorized: 'POST /transfer needs "Authorization: Bearer <token>" with the right token',
  transferFromBrowser:
    'POST /transfer does not accept requests with an Origin header (browsers); send it from a ' +
    'tool such as curl',
  transferJsonOnly: 'POST /transfer needs "Content-Type: application/json"',
  transferBodyTooLarge: (maxBytes: number) =>
    `POST /transfer's body must be at most ${maxBytes} bytes`,
  transferBodyShape:
    'POST /transfer\'s body must be a JSON object {"to": "<identity>", ' +
    '"leaseDurationSeconds": <whole seconds, optional>} and nothing else',
  transferNeedsTarget:
    'POST /transfer needs "to" in its body: the identity of the candidate to hand leadership to',
  transferNotLeader: 'this sidecar is not leading, so it has no leadership to transfer',
  transferNotCandidate: (to: string) =>
    `${JSON.stringify(to)} does not advertise itself as a candidate on the Lease right now; ` +
    'a transfer goes only to a live candidate (every nest-leader-elector advertises itself)',
  transferReadFailed: (error: unknown) =>
    `POST /transfer: reading the Lease to check the target failed: ${boundedText(errorText(error))}`,
  transferReadFailedAnswer: 'reading the Lease failed; nothing was changed; try again',
  transferWriteFailed: (error: unknown) =>
    `POST /transfer: writing the handoff failed: ${boundedText(errorText(error))}`,
  transferWriteFailedAnswer:
    'writing the handoff to the Lease failed; this sidecar takes the Lease again with a new term',
  stopping: (signal: string) => `nest-leader-elector: ${signal} received; releasing the Lease.`,
} as const;
