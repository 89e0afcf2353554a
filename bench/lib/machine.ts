import { spawnSync } from 'node:child_process';
import os from 'node:os';

/** The machine a run was on, for the report: figures mean little without it. */
export function describeMachine(dir: string): string[] {
  const cpus = os.cpus();
  const version = (command: string, args: string[]) => {
    const result = spawnSync(command, args, { encoding: 'utf8' });
    return result.error ? 'not installed' : `${result.stdout}${result.stderr}`.trim().split('\n')[0]!;
  };
  const disk =
    spawnSync('df', ['-h', '--output=source,fstype,size,avail', dir], { encoding: 'utf8' }).stdout?.trim().split('\n')[1]?.replace(/\s+/g, ' ') ?? '?';
  return [
    `CPU: ${cpus.length} × ${cpus[0]?.model.trim() ?? '?'}`,
    `memory: ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB; load average at the start ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
    `system: ${os.type()} ${os.release()} (${os.arch()})`,
    `disk of the data folder (${dir}): ${disk}`,
    `Node ${process.version}; ${version('nginx', ['-v'])}; ${version('wrk', ['--version'])}; ${version('curl', ['--version']).split(' ').slice(0, 2).join(' ')}`,
  ];
}
