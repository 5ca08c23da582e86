import { type Clock, sleepWith, type TimerHandle } from '../core/clock.js';

interface ManualTimer {
  dueMs: number;
  seq: number;
  callback: () => void;
}

/**
 * A deterministic {@link Clock} for tests: time moves only through {@link ManualClock.advance}.
 * Due timers fire in order of due time, and after each one the promises it set in motion
 * settle before the next fires, so an elector on a `MemoryLock` runs exactly as it would in
 * real time, without sleeping.
 *
 * The wall clock moves with the monotonic one, and can be jumped independently with
 * {@link ManualClock.setWallTime} to simulate clock skew.
 */
export class ManualClock implements Clock {
  private monotonicMs: number;
  private wallOffsetMs: number;
  private seq = 0;
  private timers: ManualTimer[] = [];

  /**
   * @param opts.startMs - initial monotonic time in ms; default 0
   * @param opts.wallTime - initial wall-clock time; default 2026-01-01T00:00:00Z
   */
  constructor(opts: { startMs?: number; wallTime?: Date } = {}) {
    this.monotonicMs = opts.startMs ?? 0;
    const wall = opts.wallTime ?? new Date('2026-01-01T00:00:00Z');
    this.wallOffsetMs = wall.getTime() - this.monotonicMs;
  }

  /** Current monotonic time in ms; moves only with advance() and jump(). */
  nowMs(): number {
    return this.monotonicMs;
  }

  /** Wall-clock time: the initial wall time plus elapsed monotonic time, or as set. */
  wallNow(): Date {
    return new Date(this.monotonicMs + this.wallOffsetMs);
  }

  /** Jumps the wall clock to `date` without touching monotonic time. */
  setWallTime(date: Date): void {
    this.wallOffsetMs = date.getTime() - this.monotonicMs;
  }

  /** Schedules `callback` at now + `delayMs`; it fires during a later advance(). */
  setTimer(delayMs: number, callback: () => void): TimerHandle {
    const timer: ManualTimer = {
      dueMs: this.monotonicMs + Math.max(0, delayMs),
      seq: this.seq++,
      callback,
    };
    this.timers.push(timer);
    return { cancel: () => (this.timers = this.timers.filter((t) => t !== timer)) };
  }

  /** See {@link Clock.sleep}. */
  sleep(delayMs: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, delayMs, signal);
  }

  /** Number of timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /**
   * Moves time forward by `ms`, firing every timer that falls due on the way, in order,
   * and letting pending promises settle after each. Resolves once time is `now + ms` and
   * everything has settled.
   */
  async advance(ms: number): Promise<void> {
    const targetMs = this.monotonicMs + ms;
    await this.settle();
    for (;;) {
      const next = this.nextDue();
      if (!next || next.dueMs > targetMs) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.monotonicMs = Math.max(this.monotonicMs, next.dueMs);
      next.callback();
      await this.settle();
    }
    // A jump() made by a callback on the way is kept: time never moves back.
    this.monotonicMs = Math.max(this.monotonicMs, targetMs);
    await this.settle();
  }

  /**
   * Jumps time forward by `ms` WITHOUT firing timers on the way, like a process paused by
   * SIGSTOP or a long GC; overdue timers fire at the next {@link ManualClock.advance}.
   */
  jump(ms: number): void {
    this.monotonicMs += ms;
  }

  /** Lets every promise chain that does not wait on time run to completion. */
  async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  }

  private nextDue(): ManualTimer | undefined {
    let next: ManualTimer | undefined;
    for (const t of this.timers) {
      if (!next || t.dueMs < next.dueMs || (t.dueMs === next.dueMs && t.seq < next.seq)) next = t;
    }
    return next;
  }
}
