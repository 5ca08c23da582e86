/**
 * toxiproxy-server (Shopify/toxiproxy) as a child process: built from the Go module proxy and
 * cached by `scripts/toxiproxy.sh` (the pinned version is in test/toxiproxy/go.mod), listening
 * on 127.0.0.1, driven through its HTTP API with `toxiproxy-node-client`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Toxiproxy } from 'toxiproxy-node-client';
import { repoRoot } from '../support/control-plane.js';

/** A running toxiproxy-server owned by this process. */
export interface ToxiproxyServer {
  /** API base URL, e.g. `http://127.0.0.1:38474`. */
  url: string;
  client: Toxiproxy;
  /** The server's version, as its API reports it. */
  version: string;
  /** SIGTERM, then SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<void>;
}

/** `GET /version` answers `{"version": "v2.12.0"}` (older servers: the bare string). */
function parseVersion(text: string): string {
  try {
    const parsed = JSON.parse(text) as { version?: unknown };
    if (typeof parsed.version === 'string') return parsed.version;
  } catch {
    // not JSON: the bare version
  }
  return text.trim();
}

/** A free TCP port on 127.0.0.1 (closed again before returning). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

function runScript(args: string[], progress: (line: string) => void): ChildProcess {
  const child = spawn('bash', [join(repoRoot, 'scripts/toxiproxy.sh'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  createInterface({ input: child.stderr! }).on('line', progress);
  return child;
}

/**
 * Builds (cached; a cold build takes a minute or two) and starts toxiproxy-server, resolving
 * once its API answers.
 * @param progress - receives the build's progress lines and the server's log lines
 * @throws Error when the build fails or the server does not answer within `timeoutMs`.
 */
export async function startToxiproxy(
  progress: (line: string) => void,
  timeoutMs = 10 * 60_000,
): Promise<ToxiproxyServer> {
  const build = runScript(['build'], progress);
  const code = await new Promise<number | null>((resolve) => build.once('exit', resolve));
  if (code !== 0) throw new Error(`scripts/toxiproxy.sh build failed (exit ${code})`);

  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(
    join(repoRoot, 'test/toxiproxy/.bin/toxiproxy-server'),
    ['-host', '127.0.0.1', '-port', String(port)],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } },
  );
  let tail = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const client = new Toxiproxy(url);
  const deadline = performance.now() + timeoutMs;
  let version: string | undefined;
  while (version === undefined) {
    if (child.exitCode !== null) throw new Error(`toxiproxy-server exited:\n${tail}`);
    try {
      version = await client.getVersion();
    } catch (error) {
      if (performance.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`toxiproxy-server did not answer on ${url}\n${tail}`, { cause: error });
      }
      await sleep(50);
    }
  }
  return {
    url,
    client,
    version: parseVersion(version),
    async stop(stopTimeoutMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs);
      await exited;
      clearTimeout(timer);
    },
  };
}
