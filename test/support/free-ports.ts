/**
 * Free TCP ports on 127.0.0.1 for processes that need a fixed port range (`pnpm demo --port P`
 * gives replica i the port P + i), so tests never collide with another process on the machine.
 */
import { createServer, type Server } from 'node:net';

function listen(port: number): Promise<Server | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(undefined));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => done(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((done) => server.close(() => done()));
}

/**
 * The first of `count` consecutive ports that were all free a moment ago.
 * @throws Error after 50 tries without a free range.
 */
export async function freeConsecutivePorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const first = await listen(0);
    if (!first) continue;
    const base = (first.address() as { port: number }).port;
    const held: Server[] = [first];
    for (let i = 1; i < count; i++) {
      const next = base + i <= 65_535 ? await listen(base + i) : undefined;
      if (!next) break;
      held.push(next);
    }
    await Promise.all(held.map(close));
    if (held.length === count) return base;
  }
  throw new Error(`no ${count} consecutive free ports on 127.0.0.1 after 50 tries`);
}
