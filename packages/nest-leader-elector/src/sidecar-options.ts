/**
 * Flags of the `nest-leader-elector` sidecar, compatible with the retired
 * `leader-elector:0.5` image (kubernetes-retired/contrib `election/`): `--election`,
 * `--election-namespace`, `--id`, `--ttl`, `--http`; plus `--leader-file`, and the privileged
 * transfer endpoint's `--transfer-http` and `--transfer-token-file`.
 */
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import {
  InvalidLeaderElectionOptionError,
  validateLeaseName,
  validateNamespace,
} from 'nest-leader/core';
import { sidecarMessages } from './sidecar.messages.js';

/** Default `--ttl`, as the old image's: 10 s. */
export const DEFAULT_SIDECAR_TTL_MS = 10_000;

/** What the sidecar runs with, after parsing and validation. */
export interface SidecarOptions {
  /** `--election`: the Lease's name. */
  election: string;
  /** `--election-namespace`: the Lease's namespace; default `default`. */
  namespace: string;
  /** `--id`: this candidate's identity; default the hostname (the pod's name). */
  identity: string;
  /** `--ttl` as given, in ms. */
  ttlMs: number;
  /** ttl rounded up to whole seconds: the Lease's `leaseDurationSeconds`. */
  leaseDurationSeconds: number;
  /** ttl / 2, in seconds (not rounded). */
  renewDeadlineSeconds: number;
  /** ttl / 4, in seconds (not rounded). */
  retryPeriodSeconds: number;
  /** `--http`: where to serve the leader's name; absent = no HTTP server. */
  http?: { host: string; port: number };
  /** `--leader-file`: a file that exists only while this candidate leads. */
  leaderFile?: string;
  /**
   * `--transfer-http`: where to serve `POST /transfer`; absent = transfers are off. `:port`
   * means `127.0.0.1:port`; a host beyond loopback requires `transferTokenFile`.
   */
  transferHttp?: { host: string; port: number };
  /** `--transfer-token-file`: the file holding the token `POST /transfer` must present. */
  transferTokenFile?: string;
  /** `--help` was given: print the usage and exit. */
  help: boolean;
}

/**
 * Parses the sidecar's command line (without `node` and the script). Go-style single-dash
 * long flags (`-election=x`) are accepted too, as the old image's Go `flag` package did.
 * @throws InvalidLeaderElectionOptionError naming the flag as written and the rule it breaks.
 */
export function parseSidecarArgs(
  argv: readonly string[],
  defaults: { hostname?: string } = {},
): SidecarOptions {
  const args = argv.map((a) => (/^-[a-z][a-z-]+(=|$)/.test(a) ? `-${a}` : a));
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args,
      options: {
        election: { type: 'string' },
        'election-namespace': { type: 'string' },
        id: { type: 'string' },
        ttl: { type: 'string' },
        http: { type: 'string' },
        'leader-file': { type: 'string' },
        'transfer-http': { type: 'string' },
        'transfer-token-file': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    throw new InvalidLeaderElectionOptionError(
      'command line',
      sidecarMessages.unknownFlag((error as Error).message),
    );
  }
  const help = values.help === true;
  if (help) {
    return {
      election: '',
      namespace: 'default',
      identity: '',
      ttlMs: DEFAULT_SIDECAR_TTL_MS,
      leaseDurationSeconds: 10,
      renewDeadlineSeconds: 5,
      retryPeriodSeconds: 2.5,
      help,
    };
  }
  const str = (name: string) => values[name] as string | undefined;
  if (str('election') === undefined) {
    throw new InvalidLeaderElectionOptionError('--election', sidecarMessages.requiredRule);
  }
  const election = validateLeaseName(str('election')!, '--election');
  const namespace = validateNamespace(
    str('election-namespace') ?? 'default',
    '--election-namespace',
  );
  const identity = str('id') ?? defaults.hostname ?? hostname();
  if (identity.trim() === '') {
    throw new InvalidLeaderElectionOptionError('--id', sidecarMessages.emptyRule, identity);
  }
  const ttlMs = str('ttl') === undefined ? DEFAULT_SIDECAR_TTL_MS : parseGoDurationMs(str('ttl')!);
  if (!(ttlMs >= 1000)) {
    throw new InvalidLeaderElectionOptionError('--ttl', sidecarMessages.durationRule, str('ttl'));
  }
  const options: SidecarOptions = {
    election,
    namespace,
    identity,
    ttlMs,
    leaseDurationSeconds: Math.ceil(ttlMs / 1000),
    renewDeadlineSeconds: ttlMs / 2 / 1000,
    retryPeriodSeconds: ttlMs / 4 / 1000,
    help,
  };
  if (str('http') !== undefined && str('http') !== '')
    options.http = parseHttpAddress(str('http')!);
  if (str('leader-file') !== undefined) {
    if (str('leader-file') === '') {
      throw new InvalidLeaderElectionOptionError('--leader-file', sidecarMessages.emptyRule, '');
    }
    options.leaderFile = str('leader-file');
  }
  const tokenFile = str('transfer-token-file');
  if (tokenFile !== undefined) {
    if (tokenFile === '') {
      throw new InvalidLeaderElectionOptionError(
        '--transfer-token-file',
        sidecarMessages.emptyRule,
        '',
      );
    }
    options.transferTokenFile = tokenFile;
  }
  if (str('transfer-http') !== undefined && str('transfer-http') !== '') {
    // Unlike --http, a missing host means loopback: transfers are privileged.
    const address = parseHttpAddress(str('transfer-http')!, '--transfer-http', '127.0.0.1');
    if (!isLoopbackHost(address.host) && tokenFile === undefined) {
      throw new InvalidLeaderElectionOptionError(
        '--transfer-http',
        sidecarMessages.transferHttpNeedsToken,
        str('transfer-http'),
      );
    }
    options.transferHttp = address;
  } else if (tokenFile !== undefined) {
    throw new InvalidLeaderElectionOptionError(
      '--transfer-token-file',
      sidecarMessages.tokenFileNeedsTransfer,
      tokenFile,
    );
  }
  return options;
}

/**
 * True for a host that only this machine (this pod's network namespace) reaches: `localhost`,
 * 127.0.0.0/8, `::1`.
 */
export function isLoopbackHost(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

const GO_UNITS_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/**
 * A Go `time.ParseDuration` string in ms (`10s`, `1m30s`, `1.5s`, `500ms`); NaN when it is
 * not one. A bare number other than `0` is not a Go duration.
 */
export function parseGoDurationMs(text: string): number {
  if (text === '0') return 0;
  const match = /^(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h)/;
  let rest = text;
  let total = 0;
  if (rest === '') return NaN;
  while (rest !== '') {
    const part = match.exec(rest)?.[0];
    if (!part) return NaN;
    const unit = /(ns|us|µs|ms|s|m|h)$/.exec(part)![0];
    total += Number(part.slice(0, -unit.length)) * GO_UNITS_MS[unit]!;
    rest = rest.slice(part.length);
  }
  return total;
}

/** `host:port`, `:port` (`defaultHost`: all interfaces for `--http`) or `[::1]:port`. */
function parseHttpAddress(
  text: string,
  flag = '--http',
  defaultHost = '0.0.0.0',
): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:]*):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65535) {
    throw new InvalidLeaderElectionOptionError(flag, sidecarMessages.httpRule, text);
  }
  const host = match[1]!.replace(/^\[|\]$/g, '');
  return { host: host === '' ? defaultHost : host, port };
}
