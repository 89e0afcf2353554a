import { MultiBar, Presets } from 'cli-progress';
import { humanBytes, shown } from './display.js';

/** One transfer's bar. */
export interface TransferBar {
  /** Bytes done so far (of the whole file: a resumed download starts at its offset). */
  update(done: number): void;
  /** Ends the bar (done or failed). */
  stop(): void;
}

/** The bars of a command: one per file. */
export interface TransferBars {
  add(name: string, total: number | undefined, start?: number): TransferBar;
  /** Leaves the terminal clean. */
  stop(): void;
}

const NO_BAR: TransferBar = { update() {}, stop() {} };

/**
 * Whether to draw progress: only for a person watching, i.e. stdout and stderr are both a
 * terminal (the bars go to stderr) and --json was not asked for. A command whose output
 * is piped or redirected prints no progress at all.
 */
export function showProgress(json: boolean): boolean {
  return !json && process.stdout.isTTY === true && process.stderr.isTTY === true;
}

/** Progress bars with speed and ETA (cli-progress) on stderr, or nothing when `enabled` is false. */
export function transferBars(enabled: boolean): TransferBars {
  if (!enabled) return { add: () => NO_BAR, stop() {} };
  const bars = new MultiBar(
    {
      stream: process.stderr,
      format: '{name} |{bar}| {percentage}% {doneText}/{totalText} {speed}/s ETA {eta_formatted}',
      // Fits 80 columns: a longer line is cut at the terminal's edge.
      barsize: 16,
      hideCursor: false,
      clearOnComplete: false,
      stopOnComplete: false,
      etaBuffer: 50,
      fps: 5,
    },
    Presets.shades_classic,
  );
  return {
    add(name, total, start = 0) {
      const size = total ?? 0;
      const startedAt = Date.now();
      // The end of a long name tells files apart better than its start.
      const clean = shown(name);
      const label = (clean.length > 18 ? `…${clean.slice(-17)}` : clean).padEnd(18);
      const payload = (done: number) => {
        const seconds = (Date.now() - startedAt) / 1000;
        return {
          name: label,
          doneText: humanBytes(done),
          totalText: total === undefined ? '?' : humanBytes(size),
          speed: humanBytes(seconds > 0 ? Math.round((done - start) / seconds) : 0),
        };
      };
      const bar = bars.create(size, start, payload(start));
      return {
        update: (done) => bar.update(done, payload(done)),
        stop: () => bar.stop(),
      };
    },
    stop: () => bars.stop(),
  };
}
