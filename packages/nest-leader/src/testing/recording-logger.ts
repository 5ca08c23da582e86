import type { ElectionLogger } from '../core/leader-elector.options.js';

/**
 * The level of a {@link RecordedLogLine}: the four of {@link ElectionLogger}, and the three
 * more of Nest's `LoggerService` (`log`, `verbose`, `fatal`).
 */
export type RecordedLogLevel = 'debug' | 'info' | 'warn' | 'error' | 'log' | 'verbose' | 'fatal';

/** One line a {@link RecordingLogger} was given. */
export interface RecordedLogLine {
  readonly level: RecordedLogLevel;
  /** The message as text (`String(message)`); a Nest context argument is not kept. */
  readonly message: string;
}

/**
 * A logger for tests that keeps every line it is given, in order, to assert on.
 *
 * It is an {@link ElectionLogger} (pass it as `LeaderElectorOptions.logger` or the module's
 * `logger` option), and it has the methods of Nest's `LoggerService`, so it also records what
 * Nest and the module log when given to `app.useLogger(…)` or `TestingModuleBuilder.setLogger(…)`.
 * It imports nothing of Nest.
 *
 * @example
 * const logger = new RecordingLogger();
 * const elector = new LeaderElector({ lock, identity: 'pod-a', logger, ... });
 * // ...
 * assert.equal(logger.matching('warn', 'Could not release').length, 1);
 */
export class RecordingLogger implements ElectionLogger {
  /** Every line so far, oldest first. */
  readonly lines: RecordedLogLine[] = [];

  debug(message: unknown): void {
    this.record('debug', message);
  }
  info(message: unknown): void {
    this.record('info', message);
  }
  warn(message: unknown): void {
    this.record('warn', message);
  }
  error(message: unknown): void {
    this.record('error', message);
  }
  /** Nest's `LoggerService.log`: Nest's name for the info level, recorded as `log`. */
  log(message: unknown): void {
    this.record('log', message);
  }
  /** Nest's `LoggerService.verbose`. */
  verbose(message: unknown): void {
    this.record('verbose', message);
  }
  /** Nest's `LoggerService.fatal`. */
  fatal(message: unknown): void {
    this.record('fatal', message);
  }

  /** The messages logged at `level` (default: at any level), oldest first. */
  messages(level?: RecordedLogLevel): string[] {
    return this.lines
      .filter((line) => level === undefined || line.level === level)
      .map((line) => line.message);
  }

  /**
   * The messages logged at `level` that contain `text` (a string) or match it (a RegExp),
   * oldest first.
   */
  matching(level: RecordedLogLevel, text: string | RegExp): string[] {
    return this.messages(level).filter((message) =>
      typeof text === 'string' ? message.includes(text) : text.test(message),
    );
  }

  private record(level: RecordedLogLevel, message: unknown): void {
    this.lines.push({ level, message: String(message) });
  }
}
