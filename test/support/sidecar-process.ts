/**
 * The built `nest-leader-elector` sidecar (packages/nest-leader-elector/dist/main.js) as a real
 * OS process: started with its own kubeconfig and leader file, reached over its `--http`
 * address and, when started with `--transfer-http`, its transfer address (port 0: the bound
 * ports are read from its start line).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from './control-plane.js';

/** The sidecar's bin, as `npm i nest-leader-elector` installs it. */
export const SIDECAR_MAIN = join(repoRoot, 'packages/nest-leader-elector/dist/main.js');

/** One sidecar process. */
export class SidecarProcess {
  readonly lines: string[] = [];
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private addressReady: Promise<string>;
  private transferAddressReady: Promise<string | undefined>;

  /**
   * @param id - `--id`
   * @param args - the other flags (`--election …`); `--id`, `--http` and `--leader-file`
   *   are added unless `raw` is set
   * @param kubeconfigPath - KUBECONFIG of the process
   * @param leaderFile - where its leader file goes (default: a fresh temporary directory)
   */
  constructor(
    readonly id: string,
    args: string[],
    kubeconfigPath: string,
    readonly leaderFile = join(mkdtempSync(join(tmpdir(), 'sidecar-')), 'is-leader'),
    raw = false,
  ) {
    const all = raw
      ? args
      : [...args, '--id', id, '--http', '127.0.0.1:0', '--leader-file', leaderFile];
    this.child = spawn(process.execPath, [SIDECAR_MAIN, ...all], {
      env: { ...process.env, KUBECONFIG: kubeconfigPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = once(this.child, 'exit').then(([code, signal]) => ({
      code: code as number | null,
      signal: signal as NodeJS.Signals | null,
    }));
    const startLine = new Promise<string>((resolve, reject) => {
      const onLine = (line: string) => {
        this.lines.push(line);
        if (/serving http:\/\//.test(line)) resolve(line);
      };
      createInterface({ input: this.child.stdout! }).on('line', onLine);
      createInterface({ input: this.child.stderr! }).on('line', onLine);
      this.exited.then(() => reject(new Error(`sidecar ${id} exited:\n${this.lines.join('\n')}`)));
    });
    this.addressReady = startLine.then((line) => /serving http:\/\/([^/]+)\//.exec(line)![1]!);
    this.transferAddressReady = startLine.then(
      (line) => /transfers on http:\/\/([^/]+)\/transfer/.exec(line)?.[1],
    );
    this.addressReady.catch(() => undefined);
    this.transferAddressReady.catch(() => undefined);
  }

  /** The bound `host:port`. */
  address(): Promise<string> {
    return this.addressReady;
  }

  /** The bound `host:port` of `--transfer-http`; `undefined` when transfers are off. */
  transferAddress(): Promise<string | undefined> {
    return this.transferAddressReady;
  }

  /**
   * POSTs `body` as JSON to the transfer address's `/transfer` (as an operator's tool would:
   * no Origin); `headers` are added (e.g. `authorization`). `undefined` when it does not answer.
   */
  async transfer(
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
    try {
      const response = await fetch(`http://${await this.transferAddress()}/transfer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5000),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    } catch {
      return undefined;
    }
  }

  /** GETs `path` on the sidecar; `undefined` when it does not answer. */
  get(path: string): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
    return this.request(path);
  }

  /** Sends `method` `path` to the sidecar; `undefined` when it does not answer. */
  async request(
    path: string,
    method = 'GET',
  ): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
    try {
      const response = await fetch(`http://${await this.address()}${path}`, {
        method,
        signal: AbortSignal.timeout(5000),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    } catch {
      return undefined;
    }
  }

  /** Whether its leader file exists now. */
  hasLeaderFile(): boolean {
    return existsSync(this.leaderFile);
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }
}
