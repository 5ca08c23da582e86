/** Values stored beside the election record as JSON text (Lease annotations). */

/**
 * A value stored beside the record as it is, or as JSON text (a Lease annotation): the text
 * parsed; `undefined` when it is not JSON. Never throws.
 */
export function parseStoredJson(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}
