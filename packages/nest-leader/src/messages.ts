/**
 * Every user-facing message (errors and log lines) in one place.
 * Framework-free: used by the core and the Nest layer.
 */
export {};
