/**
 * Keeps every line every container of a Deployment writes, including containers that are
 * deleted or restarted later (their logs vanish with them): it follows each container from
 * the moment it appears (`kubectl logs -f`) and never forgets a line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeCluster } from '@nest-leader/demo/launcher/node-cluster';

/** One line a container wrote, with the pod it came from. */
export interface PodLogLine {
  pod: string;
  restartCount: number;
  line: string;
}

export class PodLogCollector {
  readonly lines: PodLogLine[] = [];
  private readonly followers = new Map<string, ChildProcess>();
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(
    private readonly cluster: NodeCluster,
    private readonly namespace: string,
    private readonly selector: string,
    private readonly container: string,
  ) {
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
        const pods = (await this.cluster.getJson(
          'get',
          'pods',
          '-n',
          this.namespace,
          '-l',
          this.selector,
        )) as {
          items: {
            metadata: { name: string };
            status: {
              containerStatuses?: {
                name: string;
                restartCount: number;
                state: Record<string, unknown>;
              }[];
            };
          }[];
        };
        for (const pod of pods.items) {
          const status = pod.status.containerStatuses?.find((s) => s.name === this.container);
          if (!status || !('running' in status.state)) continue;
          this.follow(pod.metadata.name, status.restartCount);
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
    const child = spawn(
      this.cluster.kubectlBinary,
      [
        'kubectl',
        '--kubeconfig',
        this.cluster.kubeconfig,
        'logs',
        '-f',
        '-n',
        this.namespace,
        pod,
        '-c',
        this.container,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    this.followers.set(key, child);
    createInterface({ input: child.stdout! }).on('line', (line) =>
      this.lines.push({ pod, restartCount, line }),
    );
  }
}
