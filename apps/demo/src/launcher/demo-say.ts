/** The local demo's console lines: `[ 12.3s] message`, seconds since the launcher started. */
const startedAt = performance.now();

/** Prints `message` with the seconds since the launcher started. */
export function say(message: string): void {
  const seconds = ((performance.now() - startedAt) / 1000).toFixed(1).padStart(5);
  process.stdout.write(`[${seconds}s] ${message}\n`);
}
