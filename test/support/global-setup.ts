export async function globalSetup(): Promise<void> {
  process.env.NEST_LEADER_PROBE = 'set-in-global-setup';
}
export async function globalTeardown(): Promise<void> {}
