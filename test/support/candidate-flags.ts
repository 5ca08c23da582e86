/** Flag parsing shared by the candidate programs of the candidate harness. */

/** `15s`, `1.5s`, `500ms` → ms, as Go's time.ParseDuration for the forms the tests use. */
export function parseDurationMs(flag: string, value: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(value);
  if (!match) throw new Error(`--${flag} must look like 15s or 500ms, got "${value}"`);
  return Number(match[1]) * (match[2] === 's' ? 1000 : 1);
}
