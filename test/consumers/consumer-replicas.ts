/**
 * Runs a built consumer app as OS processes (`node dist/main.js` with the given Node binary)
 * and talks to it over HTTP: the matrix's replicas.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface Replica {
  child: ChildProcess;
  url: string;
  /** Exit of the process: code, or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

export interface Role {
  identity: string;
  leader: boolean;
  ticks: number;
}

/** Starts one replica on a free port; resolves once it printed `LISTENING <url>`. */
export async function startReplica(
  node: string,
  app: string,
  env: NodeJS.ProcessEnv,
): Promise<Replica> {
  const child = spawn(node, ['dist/main.js'], {
    cwd: app,
    env: { ...process.env, PORT: '0', NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => void (log = (log + chunk.toString()).slice(-8_000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`no LISTENING line in 60 s:\n${log}`)), 60_000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      log = (log + line + '\n').slice(-8_000);
      const match = /^LISTENING (http:\/\/\S+)$/.exec(line);
      if (match) {
        clearTimeout(timer);
        resolveUrl(match[1]!.replace('[::1]', '127.0.0.1'));
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`replica exited (${code ?? signal}) before listening:\n${log}`));
    });
  });
  return { child, url, exited, output: () => log };
}

export async function role(replica: Replica): Promise<Role> {
  const response = await fetch(`${replica.url}/role`, { signal: AbortSignal.timeout(5_000) });
  return (await response.json()) as Role;
}
