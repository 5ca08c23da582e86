import { electionMessages } from './election.messages.js';
import type { Clock } from './clock.js';
import type { ElectionLogger } from './leader-elector.options.js';

/** Default interval between repeats of the same failure in the log. */
export const DEFAULT_REPEAT_INTERVAL_MS = 30_000;

interface Streak {
  count: number;
  suppressed: number;
  windowStartMs: number;
}

/**
 * Logs a recurring failure once when it first happens, then at most once per interval with
 * a count, so an unreachable API server does not print a line every retryPeriod.
 */
export class RateLimitedLogger {
  private readonly streaks = new Map<string, Streak>();

  constructor(
    private readonly logger: ElectionLogger,
    private readonly clock: Clock,
    private readonly intervalMs = DEFAULT_REPEAT_INTERVAL_MS,
  ) {}

  /** Reports one occurrence of the failure `key` (e.g. `get:transient`). */
  report(key: string, level: 'warn' | 'error', message: string): void {
    const now = this.clock.nowMs();
    const streak = this.streaks.get(key);
    if (!streak) {
      this.streaks.set(key, { count: 1, suppressed: 0, windowStartMs: now });
      this.logger[level](message);
      return;
    }
    streak.count += 1;
    streak.suppressed += 1;
    if (now - streak.windowStartMs >= this.intervalMs) {
      this.logger[level](
        electionMessages.repeated(message, streak.suppressed, now - streak.windowStartMs),
      );
      streak.suppressed = 0;
      streak.windowStartMs = now;
    }
  }

  /** Ends every streak; logs once that `lock` recovered if anything had failed. */
  recovered(lock: string): void {
    if (this.streaks.size === 0) return;
    let failures = 0;
    for (const streak of this.streaks.values()) failures += streak.count;
    this.streaks.clear();
    this.logger.info(electionMessages.recovered(lock, failures));
  }
}
