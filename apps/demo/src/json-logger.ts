import { ConsoleLogger, type LogLevel } from '@nestjs/common';

/**
 * Nest's logger in JSON mode, writing every level to stderr, so that stdout carries only the
 * demo's own events (one JSON object per line, see demo-events.ts) and stays trivially
 * parseable: `node dist/main.js | jq 'select(.event == "leader-work")'`.
 */
export class StderrJsonLogger extends ConsoleLogger {
  /**
   * Levels: those in NEST_LOG_LEVEL (e.g. `>=debug`) when set, else `log` and above — the
   * library logs every call it skips on a follower at debug level.
   */
  constructor() {
    super({
      json: true,
      logLevels: process.env.NEST_LOG_LEVEL ? undefined : ['log', 'warn', 'error', 'fatal'],
    });
  }

  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: LogLevel,
    _writeStreamType?: 'stdout' | 'stderr',
    errorStack?: unknown,
    params?: Record<string, unknown>,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack, params);
  }
}
