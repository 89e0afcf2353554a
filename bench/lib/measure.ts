import { readFileSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';

export const MiB = 1024 * 1024;

/** Seconds `work` took. */
export async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The value below which `fraction` of the values lie (nearest rank). */
export function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)]!;
}

/**
 * A/B alternating rounds: each round runs every contestant once, in an order that
 * rotates, so a machine that slows down or speeds up during the run weighs on all of
 * them alike. Returns each contestant's samples.
 */
export async function alternate<K extends string>(rounds: number, contestants: Record<K, () => Promise<number>>): Promise<Record<K, number[]>> {
  const names = Object.keys(contestants) as K[];
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(round + i) % names.length]!;
      samples[name].push(await contestants[name]());
    }
  }
  return samples;
}

/** Resident memory (VmRSS) of a process in bytes; 0 once it is gone. */
export function rssOf(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

/** Samples a process's resident memory every 20 ms until stopped; returns the peak. */
export function rssPeak(pid: number): { stop(): number } {
  let peak = rssOf(pid);
  const timer = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssOf(pid));
    },
  };
}

/** `size` bytes from one reused 1 MiB buffer: the generator holds no file in memory. */
export function payload(size: number, chunk: Buffer): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= size) return this.push(null);
      const n = Math.min(chunk.length, size - sent);
      sent += n;
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    },
  });
}

/** A Writable that counts and drops. */
export function counter(): Writable & { bytes: number } {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      sink.bytes += chunk.length;
      done();
    },
  }) as Writable & { bytes: number };
  sink.bytes = 0;
  return sink;
}

export const mbps = (bytes: number, seconds: number): number => bytes / 1e6 / seconds;
export const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;
