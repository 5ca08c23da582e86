/**
 * The `nest-leader-elector` sidecar: the core {@link LeaderElector} on a {@link LeaseLock}
 * (no Nest), exposing who leads over HTTP and as a file, for applications in any language —
 * a drop-in for the retired `leader-elector:0.5` image, on a Lease instead of Endpoints.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  type Clock,
  type ElectionLogger,
  findKubernetesConfig,
  InvalidLeaderElectionOptionError,
  LeaderElector,
  LeaseLock,
  loadKubernetesConfig,
  lockRequestTimeoutMs,
  type ResourceLock,
} from 'nest-leader/core';
import { sidecarMessages } from './sidecar.messages.js';
import { LeaderFile, leaderFileContent } from './leader-file.js';
import type { SidecarOptions } from './sidecar-options.js';
import type { SidecarHttpLimits } from './sidecar-http.js';
import { SidecarServer } from './sidecar.server.js';
import { SidecarTransferServer } from './sidecar-transfer.server.js';
import { TransferToken } from './transfer-token.js';

/** What the sidecar needs besides its flags; tests and embedders may replace each. */
export interface SidecarDependencies {
  /**
   * Default: the configuration found as `LeaderModule`'s `'kubernetes'` lock finds it
   * (`KUBECONFIG`, in-cluster, `~/.kube/config`).
   */
  kubeConfig?: KubeConfig;
  /** Default: a `LeaseLock` on `--election` in `--election-namespace`. */
  lock?: ResourceLock;
  /** Default: single lines on stderr with an RFC 3339 timestamp. */
  logger?: ElectionLogger;
  /** Overrides of both HTTP servers' limits (`SIDECAR_HTTP_LIMITS`). */
  httpLimits?: Partial<SidecarHttpLimits>;
  /** The elector's clock; default the system's (tests pass a `ManualClock`). */
  clock?: Clock;
}

/** A running sidecar: its elector, the bound HTTP address, and `stop()`. */
export class LeaderElectorSidecar {
  readonly elector: LeaderElector;
  private readonly server: SidecarServer | undefined;
  private readonly transferServer: SidecarTransferServer | undefined;
  private readonly leaderFile: LeaderFile | undefined;
  private readonly logger: ElectionLogger;
  private heartbeat: NodeJS.Timeout | undefined;
  private fileWrites: Promise<void> = Promise.resolve();
  /** The current term, as the leader file names it. */
  private fileTerm: { name: string; leaseTransitions: number; acquiredAt: Date } | undefined;
  /** Bound HTTP address (`host:port`), once started with `--http`. */
  address: string | undefined;
  /** Bound transfer address (`host:port`), once started with `--transfer-http`. */
  transferAddress: string | undefined;

  /**
   * @throws InvalidLeaderElectionOptionError when no cluster is configured, a timing is
   *   invalid, or the transfer token file is unreadable or holds no valid token; KubeConfigError when a configuration exists but cannot be used.
   */
  constructor(
    private readonly options: SidecarOptions,
    dependencies: SidecarDependencies = {},
  ) {
    this.logger = dependencies.logger ?? stderrLogger;
    const token = options.transferTokenFile
      ? TransferToken.fromFile(options.transferTokenFile)
      : undefined;
    let lock = dependencies.lock;
    if (!lock) {
      let kubeConfig = dependencies.kubeConfig;
      if (!kubeConfig) {
        const found = findKubernetesConfig();
        if (!found) {
          throw new InvalidLeaderElectionOptionError('kubeconfig', sidecarMessages.noClusterRule);
        }
        kubeConfig = loadKubernetesConfig(found);
      }
      lock = new LeaseLock({
        kubeConfig,
        name: options.election,
        namespace: options.namespace,
        identity: options.identity,
      });
    }
    if (options.leaderFile) this.leaderFile = new LeaderFile(options.leaderFile);
    this.elector = new LeaderElector({
      lock,
      identity: options.identity,
      leaseDurationSeconds: options.leaseDurationSeconds,
      renewDeadlineSeconds: options.renewDeadlineSeconds,
      retryPeriodSeconds: options.retryPeriodSeconds,
      releaseOnStop: true,
      clock: dependencies.clock,
      // Advertised on the Lease (one write at start, one at stop), so a leader's POST
      // /transfer can check that its target is a live candidate.
      priority: 0,
      // SIGTERM releases the Lease to anyone, as documented (no handoff to a preferred one).
      handoffOnStop: false,
      logger: this.logger,
      callbacks: {
        onStartedLeading: (term) => {
          this.server?.noteLeader(options.identity);
          const fileTerm = {
            name: options.identity,
            leaseTransitions: term.leaseTransitions,
            acquiredAt: term.acquiredAt,
          };
          this.fileTerm = fileTerm;
          this.writeFile(fileTerm);
          term.signal.addEventListener('abort', () => {
            this.fileTerm = undefined;
            this.updateFile(() => this.leaderFile!.remove());
          });
        },
        onStoppedLeading: () => this.fileWrites,
        onNewLeader: (identity) => this.server?.noteLeader(identity),
      },
    });
    if (options.http) {
      this.server = new SidecarServer(this.elector, this.logger, dependencies.httpLimits);
    }
    if (options.transferHttp) {
      this.transferServer = new SidecarTransferServer({
        elector: this.elector,
        lock,
        leaseDurationSeconds: options.leaseDurationSeconds,
        retryPeriodMs: options.retryPeriodSeconds * 1000,
        readTimeoutMs: lockRequestTimeoutMs(options.renewDeadlineSeconds),
        token,
        logger: this.logger,
        limits: dependencies.httpLimits,
      });
    }
  }

  /** Removes a stale leader file, starts serving HTTP (if asked) and campaigning. */
  async start(): Promise<void> {
    this.leaderFile?.removeStaleSync();
    if (this.server && this.options.http) {
      const bound = await this.server.listen(this.options.http.host, this.options.http.port);
      this.address = hostPort(bound.address, bound.port);
    }
    if (this.transferServer && this.options.transferHttp) {
      const { host, port } = this.options.transferHttp;
      const bound = await this.transferServer.listen(host, port);
      this.transferAddress = hostPort(bound.address, bound.port);
    }
    if (!Number.isInteger(this.options.ttlMs / 1000)) {
      this.logger.warn(
        sidecarMessages.ttlRounded(this.options.ttlMs, this.options.leaseDurationSeconds),
      );
    }
    this.logger.info(
      sidecarMessages.starting(
        this.options.identity,
        `Lease ${this.options.namespace}/${this.options.election}`,
        this.options.leaseDurationSeconds,
        this.address ?? '',
        this.transferAddress ?? '',
      ),
    );
    this.elector.start();
    // The heartbeat re-checks leadership at call time (a paused process wakes up as a
    // follower and removes the file) and rewrites the file while leading, so its mtime is
    // never older than one retry period on a live leader.
    this.heartbeat = setInterval(() => {
      const fileTerm = this.fileTerm;
      if (!this.leaderFile) return;
      if (fileTerm && this.elector.isLeader()) this.writeFile(fileTerm);
      else if (!fileTerm) this.updateFile(() => this.leaderFile!.remove());
    }, this.options.retryPeriodSeconds * 1000);
    this.heartbeat.unref();
  }

  /** Releases the Lease (if held), removes the leader file and closes the HTTP server. */
  async stop(): Promise<void> {
    clearInterval(this.heartbeat);
    await this.elector.stop();
    if (this.leaderFile) this.updateFile(() => this.leaderFile!.remove());
    await this.fileWrites;
    await this.server?.close();
    await this.transferServer?.close();
  }

  /**
   * Writes the leader file for a live term, valid until now + leaseDuration − renewDeadline
   * (computed now, while the term is known live, not when the queued write runs).
   */
  private writeFile(term: { name: string; leaseTransitions: number; acquiredAt: Date }): void {
    const validForMs =
      (this.options.leaseDurationSeconds - this.options.renewDeadlineSeconds) * 1000;
    const content = leaderFileContent(term, new Date(), validForMs);
    this.updateFile(() => this.leaderFile!.write(content));
  }

  /** Serialises file operations so a late write never resurrects a removed file. */
  private updateFile(operation: () => Promise<void>): void {
    if (!this.leaderFile) return;
    const path = this.leaderFile.path;
    this.fileWrites = this.fileWrites
      .then(operation)
      .catch((error: unknown) => this.logger.error(sidecarMessages.leaderFileFailed(path, error)));
  }
}

function hostPort(address: string, port: number): string {
  return `${address.includes(':') ? `[${address}]` : address}:${port}`;
}

const stderrLogger: ElectionLogger = {
  debug: () => undefined,
  info: (message) => process.stderr.write(`${new Date().toISOString()} INFO ${message}\n`),
  warn: (message) => process.stderr.write(`${new Date().toISOString()} WARN ${message}\n`),
  error: (message) => process.stderr.write(`${new Date().toISOString()} ERROR ${message}\n`),
};
