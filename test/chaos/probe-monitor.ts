/**
 * Probes every running replica as a kubelet would, once a second: GET /healthz (liveness) and
 * GET /leader (who it thinks leads, which term it has seen), each with a timeout. A probe still
 * unanswered is not sent again until it settles. The samples go to the invariant checker.
 */
import type { ChaosFleet, FleetProcess } from './chaos-fleet.js';
import type { ProbeSample } from './invariant-checker.js';

export class ProbeMonitor {
  readonly samples: ProbeSample[] = [];
  private readonly inFlight = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly fleet: ChaosFleet,
    private readonly periodMs = 1000,
    private readonly timeoutMs = 2000,
  ) {}

  start(): this {
    this.timer = setInterval(() => {
      for (const p of this.fleet.alive) {
        if (p.replica.port !== 0 && !this.inFlight.has(p.instance)) void this.probe(p);
      }
    }, this.periodMs);
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async probe(p: FleetProcess): Promise<void> {
    this.inFlight.add(p.instance);
    const at = Date.now();
    try {
      const [healthz, leader] = await Promise.all([
        p.replica
          .request('/healthz', { timeoutMs: this.timeoutMs })
          .then((r): ProbeSample['healthz'] => r.status)
          .catch((error: Error): ProbeSample['healthz'] =>
            error.name === 'TimeoutError' ? 'timeout' : 'error',
          ),
        p.replica.leaderStatus(this.timeoutMs),
      ]);
      // A probe of a process that exited meanwhile tells nothing.
      if (!p.replica.running) return;
      this.samples.push({
        instance: p.instance,
        at,
        healthz,
        leader: leader && { isLeader: leader.isLeader, leaseTransitions: leader.leaseTransitions },
      });
    } finally {
      this.inFlight.delete(p.instance);
    }
  }
}
