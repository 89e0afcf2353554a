/** One line of the report: what was measured, against what, and whether it meets its target. */
export interface Figure {
  /** What was measured, e.g. "upload 256 MiB, POST /files". */
  what: string;
  /** filehaven's figure, with its unit. */
  value: string;
  /** The reference measured in the same run, with its unit ("" when there is none). */
  reference: string;
  /**
   * value / reference as a factor where higher is better for filehaven ("" when none); for a
   * latency, value / reference, lower is better, and the target says so ("≤ 4× bare").
   */
  ratio: string;
  /** The target ("" when none). */
  target: string;
  /** Whether the target is met: true, false, or null (no target, or not measurable). */
  met: boolean | null;
}

export function figure(what: string, value: string, extra: Partial<Omit<Figure, 'what' | 'value'>> = {}): Figure {
  return { what, value, reference: '', ratio: '', target: '', met: null, ...extra };
}

/** A section's result: its figures, and notes (skips, caveats) printed under them. */
export interface SectionResult {
  title: string;
  figures: Figure[];
  notes: string[];
}

export const x = (ratio: number): string => `${ratio.toFixed(2)}×`;
export const ms = (seconds: number): string => `${(seconds * 1000).toFixed(seconds < 0.01 ? 2 : 1)} ms`;
export const rate = (mbPerSecond: number): string => `${mbPerSecond.toFixed(0)} MB/s`;
