/**
 * One replica's link to the kube-apiserver: a toxiproxy TCP proxy on 127.0.0.1 in front of the
 * API server, so a fault can hit one replica's connections only. TLS passes through untouched
 * (the proxy listens on 127.0.0.1, one of the serving certificate's IP SANs).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Proxy, Toxiproxy, ToxicType } from 'toxiproxy-node-client';

/** The faults a link can carry; `heal()` removes them all. */
export type LinkFault =
  | { kind: 'blackhole' }
  | { kind: 'reset' }
  | { kind: 'latency'; latencyMs: number }
  | { kind: 'slow-close'; delayMs: number };

export class ReplicaLink {
  private toxics: string[] = [];

  private constructor(
    private readonly proxy: Proxy,
    /** Port the replica connects to. */
    readonly port: number,
  ) {}

  /**
   * Creates the proxy `name` listening on a free port of 127.0.0.1, forwarding to `upstream`
   * (`127.0.0.1:<api-server port>`).
   */
  static async create(client: Toxiproxy, name: string, upstream: string): Promise<ReplicaLink> {
    const proxy = await client.createProxy({ name, listen: '127.0.0.1:0', upstream });
    const port = Number(proxy.listen.split(':').at(-1));
    if (!Number.isInteger(port) || port <= 0) {
      throw new Error(`toxiproxy answered listen "${proxy.listen}" for ${name}`);
    }
    return new ReplicaLink(proxy, port);
  }

  /** `https://127.0.0.1:<port>`: the server URL for this replica's kubeconfig. */
  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Applies `fault` in both directions (downstream only for latency: the answers are late). */
  async apply(fault: LinkFault): Promise<void> {
    switch (fault.kind) {
      case 'blackhole':
        // timeout 0: nothing passes and nothing is closed until the toxic is removed.
        await this.add('timeout', 'upstream', { timeout: 0 });
        await this.add('timeout', 'downstream', { timeout: 0 });
        return;
      case 'reset':
        await this.add('reset_peer', 'upstream', { timeout: 0 });
        await this.add('reset_peer', 'downstream', { timeout: 0 });
        return;
      case 'latency':
        await this.add('latency', 'downstream', { latency: fault.latencyMs, jitter: 0 });
        return;
      case 'slow-close':
        // Cut every connection after a byte, then hold its close open for delayMs. Toxics
        // chain in the order they are added: limit_data's close reaches slow_close, which
        // delays it.
        await this.add('limit_data', 'downstream', { bytes: 1 });
        await this.add('slow_close', 'downstream', { delay: fault.delayMs });
        await this.add('limit_data', 'upstream', { bytes: 1 });
        await this.add('slow_close', 'upstream', { delay: fault.delayMs });
        return;
    }
  }

  /** Removes every toxic this link carries. */
  async heal(): Promise<void> {
    const names = this.toxics;
    this.toxics = [];
    for (const name of names) {
      await sendToToxiproxy(
        () => this.proxy.api.delete(`${this.proxy.getPath()}/toxics/${name}`),
        / 404$/,
      );
    }
  }

  private async add(
    type: ToxicType,
    stream: 'upstream' | 'downstream',
    attributes: Record<string, number>,
  ): Promise<void> {
    const name = `${type}-${stream}`;
    await sendToToxiproxy(
      () => this.proxy.addToxic({ name, type, stream, toxicity: 1, attributes }),
      / 409$/,
    );
    this.toxics.push(name);
  }
}

/**
 * One call of toxiproxy's API, sent again (at most 3 times) when it failed in transit
 * (`fetch failed`: e.g. a keep-alive connection the server closed just as it was reused —
 * long run seed 3330 ended at transition 548 on one). On a retry, an HTTP error matching
 * `tookEffect` (a 409 adding a toxic, a 404 removing one) means the first attempt had arrived.
 */
async function sendToToxiproxy(request: () => Promise<unknown>, tookEffect: RegExp): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await request();
      return;
    } catch (error) {
      const message = (error as Error).message;
      if (attempt > 1 && tookEffect.test(message)) return;
      if (message !== 'fetch failed' || attempt >= 3) throw error;
      await sleep(100);
    }
  }
}
