/**
 * Kubernetes MicroTime: the API server accepts exactly six fractional digits
 * (`2026-01-30T10:00:00.123456Z`); a plain `Date` serializes three and is rejected with a 400.
 */

import type { V1MicroTime } from '@kubernetes/client-node';
import { loadClientNode } from './client-node.loader.js';

/**
 * A `Date` as client-node's `V1MicroTime`, whose JSON form has six fractional digits
 * (milliseconds padded with `000`).
 */
export function toMicroTime(date: Date): V1MicroTime {
  return new (loadClientNode().V1MicroTime)(date.getTime());
}
