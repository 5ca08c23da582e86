/**
 * Keeps every line every container of a Deployment writes, including containers that are
 * deleted or restarted later (their logs vanish with them): it follows each container from
 * the moment it appears (`kubectl logs -f`) and never forgets a line. A stream that ends while
 * its container still runs (the kubelet or the API server restarted under it) is followed
 * again, from the start of the container's log, skipping the lines it already has — once its
 * first line shows it is the same container: `kubectl logs -f` streams the pod's current
 * container, and a status read just after a node restart may still name the one before
 * (pod chaos seed 3340: the restarted container's lines were kept twice, once under the old
 * restart count, and judged as two processes in one term). A container first followed under a
 * stale count has no first line to compare yet; `test/chaos/pod-logs.ts` keeps such a run once.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DemoDeployment } from './demo-deployment.js';

/** One line a container wrote, with the pod it came from. */
export interface PodLogLine {
  pod: string;
  restartCount: number;
  line: string;
}

/** How long after a stream ended its container may be followed again, ms (a kubelet restarting is down for seconds). */
const REFOLLOW_AFTER_MS = 2000;

export class PodLogCollector {
  readonly lines: PodLogLine[] = [];
  private readonly followers = new Map<string, ChildProcess>();
  /** Lines kept per container (`pod#restartCount`): a stream followed again skips these. */
  private readonly received = new Map<string, number>();
  /** Each container's first line: a stream followed again must begin with it. */
  private readonly firstLines = new Map<string, string>();
  /** When each container's last stream ended (performance.now()): not followed again sooner than {@link REFOLLOW_AFTER_MS}. */
  private readonly endedAt = new Map<string, number>();
  private stopped = false;
  private readonly loop: Promise<void>;

  /** Starts following the app container of every pod of `deployment`. */
  constructor(private readonly deployment: DemoDeployment) {
    this.loop = this.discover();
  }

  /** The JSON objects among the lines (the demo logs JSON), with their pod. */
  json<T = Record<string, unknown>>(): (T & { pod: string })[] {
    const out: (T & { pod: string })[] = [];
    for (const { pod, line } of this.lines) {
      if (!line.startsWith('{')) continue;
      try {
        out.push({ ...(JSON.parse(line) as T), pod });
      } catch {
        // a line cut by a kill is not JSON; the rest of the log still counts
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    for (const follower of this.followers.values()) follower.kill('SIGTERM');
  }

  private async discover(): Promise<void> {
    while (!this.stopped) {
      try {
        for (const pod of await this.deployment.pods()) {
          if (pod.running) this.follow(pod.name, pod.restarts);
        }
      } catch {
        // the API server is briefly unreachable: try again on the next round
      }
      await sleep(250);
    }
  }

  private follow(pod: string, restartCount: number): void {
    const key = `${pod}#${restartCount}`;
    if (this.followers.has(key)) return;
    if (performance.now() - (this.endedAt.get(key) ?? -Infinity) < REFOLLOW_AFTER_MS) return;
    let skip = this.received.get(key) ?? 0;
    let checked = false;
    const { cluster, namespace, container } = this.deployment;
    const child = spawn(
      cluster.kubectlBinary,
      [
        'kubectl',
        '--kubeconfig',
        cluster.kubeconfig,
        'logs',
        '-f',
        '-n',
        namespace,
        pod,
        '-c',
        container,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    this.followers.set(key, child);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!checked) {
        checked = true;
        const first = this.firstLines.get(key);
        if (first === undefined) this.firstLines.set(key, line);
        else if (line !== first) {
          // Another container's log (the status was stale): dropped, followed again later.
          skip = Infinity;
          child.kill('SIGTERM');
          return;
        }
      }
      if (skip > 0) {
        skip -= 1;
        return;
      }
      this.received.set(key, (this.received.get(key) ?? 0) + 1);
      this.lines.push({ pod, restartCount, line });
    });
    child.once('close', () => {
      if (this.stopped) return;
      // Its container stopped, or the stream broke under it: the discovery loop follows it
      // again while the pod says it runs.
      this.followers.delete(key);
      this.endedAt.set(key, performance.now());
    });
  }
}
