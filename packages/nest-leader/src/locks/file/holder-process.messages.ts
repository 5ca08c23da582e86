import { quoted } from '../../format.js';

/** The texts of `holder-process.ts`: why a holder's process is proven gone, or cannot be checked. */
export const holderProcessMessages = {
  noProof: 'the record carries no proof of its holder process (written by another tool or version)',
  otherHost: (host: string) => `the holder runs on another host (${quoted(host)})`,
  otherBoot: 'the holder runs on another machine or before a reboot (boot id differs or unknown)',
  otherPidNamespace: (namespace: string | undefined) =>
    `the holder runs in another PID namespace (${namespace === undefined ? 'unknown' : quoted(namespace)}; a container?)`,
  procUnreadable: '/proc cannot be read here',
  pidInUseNoStartTime: (pid: number) =>
    `PID ${pid} is in use, and this OS gives no start time to tell whether it was reused`,
  noMechanism: (platform: string) => `no way to check another process on ${platform}`,
  pidMissing: (pid: number) => `PID ${pid} no longer exists`,
  pidHidden: (pid: number) =>
    `PID ${pid} is not visible in /proc but still runs (/proc is mounted with hidepid and the ` +
    'holder is another user)',
  pidZombie: (pid: number) => `PID ${pid} has exited (a zombie not yet reaped)`,
  pidReused: (pid: number) =>
    `PID ${pid} now belongs to another process (a different start time: the PID was reused)`,
};
