/**
 * The rows this process holds under a lease (reservations, upload request slots), renewed
 * every `renewMs` while any is held: one renewal at a time, so a slow database cannot pile
 * them up, and a failed one only reported (the next tries again; a lease outlives four).
 */
export class HeldLeases {
  private readonly held = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private renewing = false;

  constructor(
    private readonly options: {
      renewMs: number;
      /** Moves the leases of these rows on (those still open). */
      renew: (ids: number[]) => Promise<unknown>;
      /** Where a failed renewal is reported. */
      report: (error: unknown) => void;
    },
  ) {}

  /** A row is held from now on: its lease is renewed until `letGo`. */
  hold(id: number): void {
    this.held.add(id);
    if (this.timer) return;
    this.timer = setInterval(() => void this.renewAll(), this.options.renewMs);
    this.timer.unref();
  }

  /** Whether this process holds the row. */
  has(id: number): boolean {
    return this.held.has(id);
  }

  /** The row is no longer held; the timer stops with the last one. */
  letGo(id: number): void {
    this.held.delete(id);
    if (this.held.size === 0) this.stopTimer();
  }

  /** Renews no more (a graceful stop); rows still held are left to their leases. */
  stop(): void {
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async renewAll(): Promise<void> {
    if (this.renewing || this.held.size === 0) return;
    this.renewing = true;
    try {
      await this.options.renew([...this.held]);
    } catch (error) {
      this.options.report(error);
    } finally {
      this.renewing = false;
    }
  }
}
