/**
 * Recognises the failure of `require()`-ing an ESM-only package from a loader that cannot:
 * Node before 22.12 or with `--no-experimental-require-module` (`ERR_REQUIRE_ESM`, "require() of
 * ES Module … not supported"), Jest's CommonJS runtime ("Must use import to load ES Module"), or
 * a loader that evaluated an ES module as CommonJS ("Cannot use import statement outside a
 * module", "Unexpected token 'export'"). The package is installed then: installing it again
 * does not help.
 */

/** Messages (or their starts) of the failures described above, as Node and Jest word them. */
const ESM_REQUIRE_MESSAGES = [
  'require() of ES Module',
  'Must use import to load ES Module',
  'Cannot use import statement outside a module',
  "Unexpected token 'export'",
];

/**
 * True when `error` (or an error in its `cause` chain) says an ES module could not be loaded by
 * `require()`; false for anything else, e.g. `MODULE_NOT_FOUND`. Never throws.
 */
export function isEsmRequireFailure(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, message, cause } = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
    };
    if (code === 'ERR_REQUIRE_ESM') return true;
    if (typeof message === 'string' && ESM_REQUIRE_MESSAGES.some((m) => message.includes(m))) {
      return true;
    }
    current = cause;
  }
  return false;
}
