/** How the local demo is stopped: the first Ctrl-C / SIGTERM stops it cleanly, a second one kills. */
import { say } from './demo-say.js';

/** The launcher's stop request, from SIGINT or SIGTERM. */
export interface StopSignals {
  /** Aborted, with the signal's name as reason, at the first signal. */
  signal: AbortSignal;
  /** Resolves with the first signal's name. */
  requested: Promise<string>;
  /** True once a second signal forced the stop. */
  readonly forced: boolean;
}

/**
 * Listens for SIGINT and SIGTERM. The first aborts {@link StopSignals.signal}; a second one, at
 * least 1 s later, calls `kill` (SIGKILL every replica).
 */
export function listenForStop(kill: () => void): StopSignals {
  const stop = new AbortController();
  let firstSignalAtMs = 0;
  let forced = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (!stop.signal.aborted) {
      firstSignalAtMs = performance.now();
      stop.abort(signal);
      return;
    }
    // One Ctrl-C can arrive twice: from the terminal (to the whole foreground process group)
    // and forwarded by `pnpm demo`. Only a second press, later, forces the stop.
    if (performance.now() - firstSignalAtMs < 1_000) return;
    forced = true;
    say(`${signal} again: killing every replica`);
    kill();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const requested = new Promise<string>((resolve) =>
    stop.signal.addEventListener('abort', () => resolve(String(stop.signal.reason)), {
      once: true,
    }),
  );
  return {
    signal: stop.signal,
    requested,
    get forced() {
      return forced;
    },
  };
}
