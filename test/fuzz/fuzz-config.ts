import { FAMILIES, type Family } from './arbitraries.js';

/**
 * The knobs of a fuzz run, from the environment:
 * - FILEHAVEN_FUZZ_RUNS   total cases over all families (default: `defaultRuns`)
 * - FILEHAVEN_FUZZ_SEED   the base seed (default: random); family i runs with seed + i
 * - FILEHAVEN_FUZZ_FAMILY run one family only (api, web, upload, protocol, mixed)
 * - FILEHAVEN_FUZZ_PATH   with SEED and FAMILY: replay fast-check's counterexample path
 */
export interface FuzzConfig {
  runs: number;
  seed: number;
  families: readonly Family[];
  path: string | undefined;
}

/** Each family's share of the runs. */
export const SHARES: Record<Family, number> = { api: 0.25, web: 0.2, upload: 0.2, protocol: 0.2, mixed: 0.15 };

function whole(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^-?\d+$/.test(raw.trim())) throw new Error(`${name} must be a whole number, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

export function fuzzConfig(defaultRuns: number, env: NodeJS.ProcessEnv = process.env): FuzzConfig {
  const runs = whole('FILEHAVEN_FUZZ_RUNS', env.FILEHAVEN_FUZZ_RUNS) ?? defaultRuns;
  const seed = whole('FILEHAVEN_FUZZ_SEED', env.FILEHAVEN_FUZZ_SEED) ?? (Math.random() * 2 ** 31) | 0;
  const family = env.FILEHAVEN_FUZZ_FAMILY?.trim();
  if (family && !FAMILIES.includes(family as Family)) throw new Error(`FILEHAVEN_FUZZ_FAMILY must be one of ${FAMILIES.join(', ')}, got ${family}`);
  return { runs, seed, families: family ? [family as Family] : FAMILIES, path: env.FILEHAVEN_FUZZ_PATH?.trim() || undefined };
}

/** The runs and seed of one family. */
export function familyPlan(config: FuzzConfig, family: Family): { numRuns: number; seed: number } {
  const share = config.families.length === 1 ? 1 : SHARES[family];
  return { numRuns: Math.max(1, Math.round(config.runs * share)), seed: config.seed + FAMILIES.indexOf(family) };
}
