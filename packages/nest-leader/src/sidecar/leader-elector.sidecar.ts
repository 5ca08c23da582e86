/**
 * The `nest-leader-elector` sidecar: the core {@link LeaderElector} on a {@link LeaseLock}
 * (no Nest), exposing who leads over HTTP and as a file, for applications in any language —
 * a drop-in for the retired `leader-elector:0.5` image, on a Lease instead of Endpoints.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { InvalidLeaderElectionOptionError } from '../errors.js';
import { LeaderElector } from '../core/leader-elector.js';
import type { ElectionLogger } from '../core/leader-elector.options.js';
import { LeaseLock } from '../locks/lease.lock.js';
import type { ResourceLock } from '../locks/resource-lock.js';
import { findKubernetesConfig, loadKubernetesConfig } from '../kubernetes/kube-config.loader.js';
import { lockSelectionMessages } from '../locks/lock-selection.messages.js';
import { sidecarMessages } from './sidecar.messages.js';
import { LeaderFile, type LeaderFileContent } from './leader-file.js';
import type { SidecarOptions } from './sidecar-options.js';
import { SidecarServer } from './sidecar.server.js';

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
}

/** A running sidecar: its elector, the bound HTTP address, and `stop()`. */
export class LeaderElectorSidecar {
  readonly elector: LeaderElector;
  private readonly server: SidecarServer | undefined;
  private readonly leaderFile: LeaderFile | undefined;
  private readonly logger: ElectionLogger;
  private heartbeat: NodeJS.Timeout | undefined;
  private fileWrites: Promise<void> = Promise.resolve();
  /** What the leader file holds during the current term. */
  private fileContent: LeaderFileContent | undefined;
  /** Bound HTTP address (`host:port`), once started with `--http`. */
  address: string | undefined;

  /**
   * @throws InvalidLeaderElectionOptionError when no cluster is configured or a timing is
   *   invalid; KubeConfigError when a configuration exists but cannot be used.
   */
  constructor(
    private readonly options: SidecarOptions,
    dependencies: SidecarDependencies = {},
  ) {
    this.logger = dependencies.logger ?? stderrLogger;
    let lock = dependencies.lock;
    if (!lock) {
      let kubeConfig = dependencies.kubeConfig;
      if (!kubeConfig) {
        const found = findKubernetesConfig();
        if (!found) {
          throw new InvalidLeaderElectionOptionError(
            'kubeconfig',
            lockSelectionMessages.noClusterRule,
          );
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
      logger: this.logger,
      callbacks: {
        onStartedLeading: (term) => {
          this.server?.noteLeader(options.identity);
          const content: LeaderFileContent = {
            name: options.identity,
            leaseTransitions: term.leaseTransitions,
            acquiredAt: term.acquiredAt.toISOString(),
          };
          this.fileContent = content;
          this.updateFile(() => this.leaderFile!.write(content));
          term.signal.addEventListener('abort', () => {
            this.fileContent = undefined;
            this.updateFile(() => this.leaderFile!.remove());
          });
        },
        onStoppedLeading: () => this.fileWrites,
        onNewLeader: (identity) => this.server?.noteLeader(identity),
      },
    });
    if (options.http) {
      this.server = new SidecarServer(this.elector, options.leaseDurationSeconds);
    }
  }

  /** Removes a stale leader file, starts serving HTTP (if asked) and campaigning. */
  async start(): Promise<void> {
    this.leaderFile?.removeStaleSync();
    if (this.server && this.options.http) {
      const bound = await this.server.listen(this.options.http.host, this.options.http.port);
      this.address = `${bound.address.includes(':') ? `[${bound.address}]` : bound.address}:${bound.port}`;
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
      ),
    );
    this.elector.start();
    // The heartbeat re-checks leadership at call time (a paused process wakes up as a
    // follower and removes the file) and rewrites the file while leading, so its mtime is
    // never older than one retry period on a live leader.
    this.heartbeat = setInterval(() => {
      const content = this.fileContent;
      if (!this.leaderFile) return;
      if (content && this.elector.isLeader())
        this.updateFile(() => this.leaderFile!.write(content));
      else if (!content) this.updateFile(() => this.leaderFile!.remove());
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

const stderrLogger: ElectionLogger = {
  debug: () => undefined,
  info: (message) => process.stderr.write(`${new Date().toISOString()} INFO ${message}\n`),
  warn: (message) => process.stderr.write(`${new Date().toISOString()} WARN ${message}\n`),
  error: (message) => process.stderr.write(`${new Date().toISOString()} ERROR ${message}\n`),
};
