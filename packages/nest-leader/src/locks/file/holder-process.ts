/**
 * Proof of a file-lock holder's process: what the holder writes about itself beside the record,
 * and what another candidate on the same host can conclude from it — the process is alive, it
 * is gone (the OS proves it), or nothing can be proven from here. Framework-free.
 *
 * The proof, on Linux: the PID plus the process's start time (`/proc/<pid>/stat` field 22,
 * clock ticks since boot), valid only between processes that share the host (hostname and
 * `/proc/sys/kernel/random/boot_id`) and the PID namespace (`readlink /proc/self/ns/pid`). A
 * PID that no longer exists, or is a zombie, or now belongs to a process started at another
 * time (PID reuse) proves the holder gone. On macOS (no `/proc`; `kern.bootsessionuuid` for the
 * boot) only `process.kill(pid, 0)` failing with `ESRCH` proves it gone; a PID in use may have
 * been reused, so it proves nothing. Everywhere else nothing is proven. A PID missing from
 * `/proc` is confirmed with `process.kill(pid, 0)` before it counts as gone: with `/proc`
 * mounted `hidepid=1|2` another user's live process is missing there too (signal 0 answers
 * EPERM for it), and is then `unknown`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { HolderLiveness } from '../resource-lock.js';
import { holderProcessMessages } from './holder-process.messages.js';

/** What a holder writes about its own process (the `holderProcess` field of a lease file). */
export interface HolderProcess {
  /** `os.hostname()` of the holder. */
  hostname: string;
  /** The holder's PID, in its own PID namespace. */
  pid: number;
  /** Boot identity: Linux `/proc/sys/kernel/random/boot_id`, macOS `kern.bootsessionuuid`. */
  bootId?: string;
  /** PID namespace: `readlink /proc/self/ns/pid`, e.g. `pid:[4026531836]` (Linux only). */
  pidNamespace?: string;
  /** Start time of the process: `/proc/<pid>/stat` field 22, clock ticks since boot (Linux only). */
  startTime?: string;
}

let self: HolderProcess | undefined;

/** This process's {@link HolderProcess}, computed once. Never throws (unknown parts are absent). */
export function thisHolderProcess(): HolderProcess {
  self ??= {
    hostname: hostname(),
    pid: process.pid,
    bootId: bootId(),
    pidNamespace: attempt(() => readlinkSync('/proc/self/ns/pid')),
    startTime: ownStartTime(),
  };
  return self;
}

/**
 * What the OS can prove about `holder` from this process (`observer`, default this one):
 * - `alive`: same host and PID namespace, and the PID runs the very process (same start time);
 * - `gone`: same host and PID namespace, and the PID does not exist, is a zombie, or belongs to a
 *   process started at another time (it was reused); `proof` says which;
 * - `unknown`: anything else (another host or boot, another PID namespace, a record without
 *   proof, an OS without the mechanism); `reason` says why. Then only the lease can tell.
 * Never throws: a lease file may hold anything.
 */
export function checkHolderProcess(
  holder: unknown,
  observer: HolderProcess = thisHolderProcess(),
): HolderLiveness {
  const messages = holderProcessMessages;
  if (!isHolderProcess(holder)) return { state: 'unknown', reason: messages.noProof };
  if (holder.hostname !== observer.hostname) {
    return { state: 'unknown', reason: messages.otherHost(holder.hostname) };
  }
  if (!observer.bootId || holder.bootId !== observer.bootId) {
    return { state: 'unknown', reason: messages.otherBoot };
  }
  if (observer.pidNamespace !== undefined) {
    if (holder.pidNamespace !== observer.pidNamespace) {
      return { state: 'unknown', reason: messages.otherPidNamespace(holder.pidNamespace) };
    }
    if (holder.startTime === undefined) return { state: 'unknown', reason: messages.noProof };
    const stat = procStat(holder.pid);
    if (stat === 'missing') {
      // /proc mounted with hidepid hides other users' processes as if they did not exist: only
      // the kernel's own answer to signal 0 (ESRCH) proves the PID gone; EPERM means it runs.
      return signalZero(holder.pid) === 'ESRCH'
        ? { state: 'gone', proof: messages.pidMissing(holder.pid) }
        : { state: 'unknown', reason: messages.pidHidden(holder.pid) };
    }
    if (stat === undefined) return { state: 'unknown', reason: messages.procUnreadable };
    if (stat.state === 'Z' || stat.state === 'X') {
      return { state: 'gone', proof: messages.pidZombie(holder.pid) };
    }
    if (stat.startTime !== holder.startTime) {
      return { state: 'gone', proof: messages.pidReused(holder.pid) };
    }
    return { state: 'alive' };
  }
  if (process.platform === 'darwin' && holder.pidNamespace === undefined) {
    return signalZero(holder.pid) === 'ESRCH'
      ? { state: 'gone', proof: messages.pidMissing(holder.pid) }
      : { state: 'unknown', reason: messages.pidInUseNoStartTime(holder.pid) };
  }
  return { state: 'unknown', reason: messages.noMechanism(process.platform) };
}

/**
 * Whether {@link checkHolderProcess} looks at `holder`'s PID from here (same host, boot and PID
 * namespace, or macOS on the same boot), so its answer can change while the holder dies: worth
 * checking again. False when the answer is `unknown` for good (another host, no proof, …).
 */
export function isCheckableHere(
  holder: unknown,
  observer: HolderProcess = thisHolderProcess(),
): boolean {
  if (!isHolderProcess(holder) || holder.hostname !== observer.hostname) return false;
  if (!observer.bootId || holder.bootId !== observer.bootId) return false;
  if (observer.pidNamespace !== undefined) {
    return holder.pidNamespace === observer.pidNamespace && holder.startTime !== undefined;
  }
  return process.platform === 'darwin' && holder.pidNamespace === undefined;
}

function isHolderProcess(value: unknown): value is HolderProcess {
  const holder = value as Partial<HolderProcess> | null | undefined;
  return (
    typeof holder === 'object' &&
    holder !== null &&
    typeof holder.hostname === 'string' &&
    Number.isSafeInteger(holder.pid) &&
    holder.pid! > 0 &&
    (holder.bootId === undefined || typeof holder.bootId === 'string') &&
    (holder.pidNamespace === undefined || typeof holder.pidNamespace === 'string') &&
    (holder.startTime === undefined || typeof holder.startTime === 'string')
  );
}

/**
 * State (field 3) and start time (field 22) of `/proc/<pid>/stat`; `'missing'` when the PID does
 * not exist; `undefined` when /proc cannot be read. The command name (field 2) may hold spaces
 * and parentheses, so fields are counted after its last `)`.
 */
function procStat(pid: number): { state: string; startTime: string } | 'missing' | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ESRCH' ? 'missing' : undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const [state, startTime] = [fields[0], fields[19]];
  return state && startTime ? { state, startTime } : undefined;
}

function ownStartTime(): string | undefined {
  const stat = procStat(process.pid);
  return typeof stat === 'object' ? stat.startTime : undefined;
}

function bootId(): string | undefined {
  if (process.platform === 'linux') {
    return attempt(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  }
  if (process.platform === 'darwin') {
    return attempt(() =>
      execFileSync('/usr/sbin/sysctl', ['-n', 'kern.bootsessionuuid'], {
        encoding: 'utf8',
        timeout: 2_000,
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim(),
    );
  }
  return undefined;
}

/** `process.kill(pid, 0)`: `'ESRCH'` when no such process exists, else what else it said. */
function signalZero(pid: number): string {
  try {
    process.kill(pid, 0);
    return 'exists';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'unknown';
  }
}

function attempt(read: () => string): string | undefined {
  try {
    return read() || undefined;
  } catch {
    return undefined;
  }
}
