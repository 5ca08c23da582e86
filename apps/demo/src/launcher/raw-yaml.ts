/**
 * YAML to plain objects, every field kept.
 *
 * Not client-node's `loadAllYaml`: it maps each document onto the typed model of its kind and
 * silently drops every field the model does not know, so a typo (`readinesProbe:`) would
 * vanish before the API server could reject it.
 */
import { load, loadAll } from 'js-yaml';

/** The one document in `text`, as plain data. */
export function parseYaml<T>(text: string): T {
  return load(text) as T;
}

/** Every non-empty document in `text`, as plain data. */
export function parseAllYaml<T>(text: string): T[] {
  return loadAll(text).filter((doc) => doc !== null && doc !== undefined) as T[];
}
