import { setTimeout as sleep } from 'node:timers/promises';
import { answerText, checkExchange, describeResponse, type Violation, type ViolationKind } from './checks.js';
import { describeCase, type FuzzCase, renderPieces, reproducer } from './fuzz-case.js';
import { type RawExchange, rawExchange } from './raw-http.js';
import type { FuzzTarget } from './targets.js';

/**
 * Runs fuzz cases one at a time against a target and checks, after each: the answer
 * (checks.ts), that the process is alive and /healthz answers, and that storage holds
 * nothing the case does not explain (no temp file left, no file row whose bytes are not
 * a whole file part of the request, no row the answer does not mention). A crashed server
 * is restarted on the same storage, so the next case (and fast-check's shrinking) runs
 * against a live one.
 */

/** The bound on one exchange: an answer, or a close, must come within it. */
export const ANSWER_BOUND_MS = 10_000;
/** How long storage may take to settle after a case (a reset upload's cleanup is asynchronous). */
const SETTLE_MS = 3_000;

export interface CaseResult {
  exchange: RawExchange;
  violations: Violation[];
}

/** Counts for the summary: requests, violations by kind, statuses. */
export class FuzzStats {
  requests = 0;
  readonly byKind = new Map<ViolationKind, number>();
  readonly statuses = new Map<string, number>();
  /** The first example of each kind of violation (by kind and the first words of its detail). */
  readonly examples = new Map<string, { c: FuzzCase; violation: Violation; host: string }>();

  record(c: FuzzCase, result: CaseResult, host: string): void {
    this.requests++;
    const response = result.exchange.response;
    const status = response ? String(response.status) : result.exchange.timedOut ? 'timeout' : c.ending === 'abort' ? 'reset by client' : 'closed by server';
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    for (const violation of result.violations) {
      this.byKind.set(violation.kind, (this.byKind.get(violation.kind) ?? 0) + 1);
      const key = `${violation.kind}: ${response?.status ?? '-'} ${violation.detail.replace(/"[^"]*"|\d+/g, '').slice(0, 60)}`;
      if (!this.examples.has(key)) this.examples.set(key, { c, violation, host });
    }
  }

  count(kind: ViolationKind): number {
    return this.byKind.get(kind) ?? 0;
  }
}

/** A readable report of one failing case: the request, the violations, a shell reproducer. */
export function reportCase(c: FuzzCase, violations: Violation[], exchange?: RawExchange): string {
  return [
    describeCase(c),
    ...violations.map((violation) => `  ✗ ${violation.kind}: ${violation.detail}`),
    ...(exchange ? [`  answer: ${describeResponse(exchange.response)}${exchange.errorCode ? ` (${exchange.errorCode})` : ''}`] : []),
    `  reproduce: ${reproducer(c)}`,
  ].join('\n');
}

export class FuzzSession {
  readonly stats = new FuzzStats();
  /** Digests a case may explain rows with: its own whole file parts, for the case after it too. */
  private previous: { digests: Set<string>; answered: boolean } = { digests: new Set(), answered: true };
  /** The file rows after the last case (the fixtures' before the first): only rows beyond them need explaining. */
  private rows: Map<string, string> | undefined;
  /** Whether the last exit of the process was reported against a case. */
  private exitReported = false;

  constructor(readonly target: FuzzTarget) {}

  /**
   * Sends one case and checks everything; never throws for a server failure (it is a
   * violation). `boundMs` bounds the answer (ANSWER_BOUND_MS unless given).
   */
  async run(c: FuzzCase, options: { boundMs?: number } = {}): Promise<CaseResult> {
    const { target } = this;
    const early: Violation[] = [];
    const exit = target.exit();
    if (exit !== null) {
      // Reported against the case that ended it; a death between cases is reported here.
      if (!this.exitReported) early.push({ ...crashViolation(exit), detail: `before this case: ${crashViolation(exit).detail}` });
      await target.restart();
    }
    this.exitReported = false;
    this.rows ??= await target.storage.fileRows();
    const rowsBefore = this.rows;
    const stagedBefore = new Set(await target.storage.stagedUploads());
    const host = `${target.host}:${target.port}`;

    const exchange = await rawExchange({
      host: target.host,
      port: target.port,
      pieces: renderPieces(c, host),
      headRequest: c.method === 'HEAD',
      ending: c.ending,
      abortAfterMs: c.abortAfterMs,
      timeoutMs: options.boundMs ?? ANSWER_BOUND_MS,
    });
    const violations = [...early, ...checkExchange(c, exchange)];
    const answered = exchange.response?.complete === true;

    // A case without an answer may still be running on the server: wait for it to settle.
    if (!answered) await this.settle(stagedBefore);
    const health = await this.alive();
    if (health.some((violation) => violation.kind === 'crash')) this.exitReported = true;
    violations.push(...health);
    if (target.exit() === null) violations.push(...(await this.storageAfter(c, exchange, rowsBefore, stagedBefore)));

    const result = { exchange, violations };
    this.stats.record(c, result, host);
    this.previous = { digests: new Set(c.wholeFileDigests), answered };
    return result;
  }

  /** The process runs and /healthz answers 200 `ok`. */
  private async alive(): Promise<Violation[]> {
    const exit = this.target.exit();
    if (exit !== null) return [crashViolation(exit)];
    const health = await rawExchange({
      host: this.target.host,
      port: this.target.port,
      pieces: [Buffer.from(`GET /healthz HTTP/1.1\r\nHost: ${this.target.host}:${this.target.port}\r\nConnection: close\r\n\r\n`)],
      timeoutMs: ANSWER_BOUND_MS,
    });
    // The exit event may trail the closed socket by a moment.
    if (health.response?.status !== 200) await sleep(200);
    const late = this.target.exit();
    if (late !== null) return [crashViolation(late)];
    if (health.response?.status !== 200 || health.response.body.toString() !== 'ok\n') {
      return [
        {
          kind: 'unhealthy',
          detail: `GET /healthz after the case: ${describeResponse(health.response)}${health.timedOut ? ' (timed out)' : ''}${health.errorCode ? ` (${health.errorCode})` : ''}`,
        },
      ];
    }
    return [];
  }

  /**
   * Waits (bounded) until no upload is staged beyond `stagedBefore` (temp files an earlier
   * case left are that case's failure, not a reason to wait) and the file rows stop changing.
   */
  private async settle(stagedBefore: ReadonlySet<string> = new Set()): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    let stable = 0;
    let last = -1;
    while (Date.now() < deadline && this.target.exit() === null) {
      const staged = (await this.target.storage.stagedUploads()).filter((name) => !stagedBefore.has(name)).length;
      const rows = (await this.target.storage.fileRows()).size;
      stable = staged === 0 && rows === last ? stable + 1 : 0;
      last = rows;
      if (stable >= 2) return;
      await sleep(10);
    }
  }

  private async storageAfter(c: FuzzCase, exchange: RawExchange, rowsBefore: Map<string, string>, stagedBefore: Set<string>): Promise<Violation[]> {
    const violations: Violation[] = [];
    const storage = this.target.storage;
    // Temp files: a refused or interrupted upload removes its own (asynchronously).
    let leftover = (await storage.stagedUploads()).filter((name) => !stagedBefore.has(name));
    for (let i = 0; leftover.length > 0 && i < SETTLE_MS / 50; i++) {
      await sleep(50);
      leftover = (await storage.stagedUploads()).filter((name) => !stagedBefore.has(name));
    }
    if (leftover.length > 0) violations.push({ kind: 'kept', detail: `temp files left in tmp/: ${leftover.join(', ')}` });

    const rows = await storage.fileRows();
    const existing = new Set(rowsBefore.values());
    const text = answerText(exchange.response);
    const answered = exchange.response?.complete === true;
    for (const [id, digest] of rows) {
      if (rowsBefore.has(id)) continue;
      const own = c.wholeFileDigests.includes(digest);
      const copy = existing.has(digest);
      const late = !this.previous.answered && this.previous.digests.has(digest);
      if (!own && !copy && !late) {
        violations.push({
          kind: 'kept',
          detail: `file row ${id} holds bytes (sha256 ${digest}) that are not a whole file part of the request nor an existing file`,
        });
      } else if (answered && !text.includes(id) && !late) {
        violations.push({ kind: 'kept', detail: `file row ${id} was created but the answer does not mention it: ${describeResponse(exchange.response)}` });
      }
    }
    this.rows = rows;
    return violations;
  }

  /**
   * The end-of-run storage check: no temp files, and the stored blobs, the blob rows and
   * the live files' digests are the same set (nothing stored that no file points at,
   * nothing pointed at that is not stored).
   */
  async finalCheck(): Promise<Violation[]> {
    if (this.target.exit() !== null) return [crashViolation(this.target.exit()!)];
    await this.settle(new Set(await this.target.storage.stagedUploads()));
    const violations: Violation[] = [];
    const staged = await this.target.storage.stagedUploads();
    if (staged.length > 0) violations.push({ kind: 'kept', detail: `temp files left in tmp/ at the end: ${staged.join(', ')}` });
    let problem: string | null = null;
    for (let i = 0; i < 20; i++) {
      const { stored, rows, live } = await this.target.storage.blobs();
      const missing = (a: string[], b: string[]) => a.filter((digest) => !b.includes(digest));
      const parts = [
        [missing(stored, rows), 'stored blobs without a blob row'],
        [missing(rows, live), 'blob rows no live file points at'],
        [missing(live, stored), 'live files whose blob is not stored'],
      ] as const;
      problem =
        parts
          .filter(([list]) => list.length > 0)
          .map(([list, what]) => `${what}: ${list.join(', ')}`)
          .join('; ') || null;
      if (!problem) break;
      await sleep(100);
    }
    if (problem) violations.push({ kind: 'kept', detail: problem });
    return violations;
  }
}

function crashViolation(exit: { code: number | null; signal: string | null; stderrTail: string }): Violation {
  return {
    kind: 'crash',
    detail: `the server process exited (code ${exit.code}, signal ${exit.signal}):\n${exit.stderrTail.trim().split('\n').slice(-25).join('\n')}`,
  };
}
