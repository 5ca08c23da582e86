/**
 * Hostile HTTP/1.1 clients on a raw socket (node:net), for what `fetch` refuses to send: a
 * malformed request target, an oversized header, a client that never finishes its headers.
 */
import { connect } from 'node:net';

/** What came back: the status of the first answer (none if closed unanswered), all text. */
export interface RawHttpAnswer {
  status: number | undefined;
  text: string;
}

/** An exchange under way: `answer` resolves when the server closes the connection. */
export interface RawHttpExchange {
  answer: Promise<RawHttpAnswer>;
  /** Closes the connection from this side. */
  destroy(): void;
}

/**
 * Sends `request` (bytes as given, unterminated if so) to `host:port` and collects the answer
 * until the server closes the connection (a reset after the answer is fine).
 */
export function rawHttp(address: string, request: string): RawHttpExchange {
  const match = /^\[?([^\]]+)\]?:(\d+)$/.exec(address)!;
  const socket = connect(Number(match[2]), match[1]!);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  socket.write(request);
  const answer = new Promise<RawHttpAnswer>((resolve) =>
    socket.on('close', () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ status: status === undefined ? undefined : Number(status), text });
    }),
  );
  return { answer, destroy: () => socket.destroy() };
}

/** A complete `GET <target>` that asks the server to close after answering. */
export function rawGet(target: string, extraHeaders = ''): string {
  return `GET ${target} HTTP/1.1\r\nHost: sidecar\r\nConnection: close\r\n${extraHeaders}\r\n`;
}
