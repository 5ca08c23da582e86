/**
 * How values appear in messages, shared by every folder's messages file: an option's value
 * (redacted), a foreign name (quoted), a duration, a thrown value.
 *
 * Framework-free and dependency-free: imported by `errors.messages.ts` and every folder.
 */

import { inspect, types } from 'node:util';

function show(value: unknown): string {
  return inspect(value, { depth: 1, breakLength: Infinity });
}

/** Longest string shown as is in an option error; longer ones may be secrets (tokens). */
const MAX_SHOWN_STRING_LENGTH = 32;

/**
 * An option's value for an error message, without leaking what it may hold: numbers,
 * booleans, `null`/`undefined` as they are; short printable strings quoted; long strings,
 * objects, arrays and functions only by their shape (a token passed to the wrong option
 * must not end up in a log).
 */
export function describeOptionValue(value: unknown): string {
  switch (typeof value) {
    case 'number':
    case 'boolean':
    case 'bigint':
    case 'undefined':
      return String(value);
    case 'string':
      return value.length <= MAX_SHOWN_STRING_LENGTH && !/[\p{Cc}\p{Cf}]/u.test(value)
        ? JSON.stringify(value)
        : `a string of ${value.length} characters`;
    case 'function':
      return 'a function';
    case 'symbol':
      return 'a symbol';
    default: {
      if (value === null) return 'null';
      if (Array.isArray(value)) return `an array of ${value.length} items`;
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
      return typeof name === 'string' && name !== '' && name !== 'Object'
        ? `a ${name}`
        : 'an object';
    }
  }
}

/** Longest foreign name shown whole by {@link quoted}, in characters. */
export const MAX_QUOTED_LENGTH = 256;

/**
 * A name from a record or a peer (holderIdentity, a host name) for a log line: JSON-quoted,
 * so control characters in a foreign record cannot forge log lines, and cut after
 * {@link MAX_QUOTED_LENGTH} characters (`"abc…"+N more`), so a peer cannot flood the log.
 * The one helper for foreign names in messages; foreign free text (an error body, a parser's
 * reason) goes through {@link boundedText} instead.
 */
export function quoted(name: string): string {
  if (name.length <= MAX_QUOTED_LENGTH) return JSON.stringify(name);
  const more = name.length - MAX_QUOTED_LENGTH;
  return `${JSON.stringify(`${name.slice(0, MAX_QUOTED_LENGTH)}…`)}+${more} more`;
}

/** A duration in milliseconds as seconds for a message: `1500` → `1.5s`. */
export function seconds(ms: number): string {
  return `${Math.round(ms) / 1000}s`;
}

/**
 * The message of a thrown error — also of one made in another realm (Jest's module registry
 * throws its own `Error`s into the test's VM context, where `instanceof Error` is false) — or
 * any other thrown value shown in one line.
 */
export function errorText(error: unknown): string {
  return error instanceof Error || types.isNativeError(error) ? error.message : show(error);
}

/** Longest foreign text (a server's error body, a parser's reason) shown in a message. */
export const MAX_FOREIGN_TEXT_LENGTH = 300;

/**
 * Text from outside this process (an API server's message, an exception's message) for a
 * message or log line: one line (control, format and line-separator characters become
 * spaces, so it cannot forge log lines), trimmed and cut at `maxLength` characters with the
 * number left off. It must not be a text that may hold a secret (a file's contents): callers
 * leave those out entirely.
 */
export function boundedText(text: string, maxLength = MAX_FOREIGN_TEXT_LENGTH): string {
  const line = text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ').trim();
  if (line.length <= maxLength) return line;
  return `${line.slice(0, maxLength)}… (${line.length - maxLength} more characters)`;
}
