/**
 * Where the machine's CPU went during a measured window: the server child
 * (reported by the child itself), the load generator (this process) and
 * everything else (other people's work on a shared machine, and PostgreSQL's
 * backends for the PostgreSQL cases). Without the last figure a slow run
 * cannot be told from a slow server.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';

/** Busy and total CPU time of the whole machine, in ms (Linux /proc/stat; null elsewhere). */
function machineTimes(): { busyMs: number; totalMs: number } | null {
  let line: string | undefined;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
  } catch {
    return null;
  }
  if (!line?.startsWith('cpu ')) return null;
  // user nice system idle iowait irq softirq steal …, in clock ticks (USER_HZ, 100 on Linux).
  const ticks = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  const total = ticks.slice(0, 8).reduce((sum, t) => sum + t, 0);
  return { busyMs: (total - idle) * 10, totalMs: total * 10 };
}

export interface MachineUsage {
  /** 1-minute load average when the window began. */
  loadAtStart: number;
  cpus: number;
  /** CPU time of the load generator (this process) in the window. */
  loadGeneratorCpuMs: number;
  /** Busy CPU time of the whole machine in the window; null where /proc/stat is missing. */
  machineBusyMs: number | null;
  /** The whole machine's capacity in the window (cores × wall time). */
  machineTotalMs: number | null;
}

export function machineMeter(): { stop(): MachineUsage } {
  const loadAtStart = loadavg()[0] ?? 0;
  const ownStart = process.cpuUsage();
  const machineStart = machineTimes();
  return {
    stop(): MachineUsage {
      const own = process.cpuUsage(ownStart);
      const machineEnd = machineTimes();
      const machine = machineStart && machineEnd ? { busy: machineEnd.busyMs - machineStart.busyMs, total: machineEnd.totalMs - machineStart.totalMs } : null;
      return {
        loadAtStart,
        cpus: cpus().length,
        loadGeneratorCpuMs: (own.user + own.system) / 1000,
        machineBusyMs: machine?.busy ?? null,
        machineTotalMs: machine?.total ?? null,
      };
    },
  };
}

/** CPU time of everything but the server and the load generator: other processes' share of the window. */
export function otherCpuMs(machine: MachineUsage, serverCpuMs: number): number | null {
  if (machine.machineBusyMs === null) return null;
  return Math.max(0, machine.machineBusyMs - serverCpuMs - machine.loadGeneratorCpuMs);
}
