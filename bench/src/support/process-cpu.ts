/**
 * CPU time of a process and its descendants from /proc (Linux): how much the API server (and,
 * with envtest binaries, its etcd and kube-apiserver children) worked during a window.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond: number | undefined;

function clockTicksPerSecond(): number {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  return ticksPerSecond;
}

/** utime + stime and parent pid of one process; `undefined` if it is gone. */
function readStat(pid: number): { ppid: number; ticks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined;
  }
}

/** CPU seconds used so far by `pid` and every live descendant. */
export function processTreeCpuSeconds(pid: number): number {
  const parents = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    const child = Number(entry);
    if (!Number.isInteger(child)) continue;
    const stat = readStat(child);
    if (!stat) continue;
    parents.set(child, stat.ppid);
    ticks.set(child, stat.ticks);
  }
  let total = 0;
  for (const [candidate, candidateTicks] of ticks) {
    for (let p: number | undefined = candidate; p !== undefined && p > 1; p = parents.get(p)) {
      if (p === pid) {
        total += candidateTicks;
        break;
      }
    }
  }
  return total / clockTicksPerSecond();
}
