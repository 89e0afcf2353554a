import type { AuditEntry, AuditFilter, MetadataStore } from '../db/repositories/repositories.js';
import { InputError } from '../domain/errors.js';
import type { Clock } from '../domain/ids.js';
import { truncateUtf8 } from '../domain/names.js';

export interface AuditServiceDeps {
  store: MetadataStore;
  clock: Clock;
}

/** What an operator did; the time is added by the service. */
export interface AuditRecord {
  /** Who acted: `cli:<os user>`, later `web:<login>`. */
  actor: string;
  /** What was done, `<group>.<verb>`, e.g. `files.block`, `accounts.set-password`. */
  action: string;
  /** What it was done to, `<kind>:<id>`, e.g. `file:K7Q2M9X4PA`, `account:alice`. */
  object: string;
  /** Free-form details. Never a password or an API key. */
  details?: string;
}

// The column widths of migration 0002, so PostgreSQL never refuses an entry.
const WIDTH = { actor: 255, action: 64, object: 255, details: 1024 } as const;
const MAX_LIST = 10_000;

/** The audit log of operator actions (who did what to which object, and when). */
export class AuditService {
  constructor(private readonly deps: AuditServiceDeps) {}

  /** Appends an entry stamped with the current time. */
  async record(entry: AuditRecord): Promise<void> {
    await this.deps.store.audit.record({
      at: this.deps.clock(),
      actor: clip(entry.actor, WIDTH.actor),
      action: clip(entry.action, WIDTH.action),
      object: clip(entry.object, WIDTH.object),
      details: clip(entry.details ?? '', WIDTH.details),
    });
  }

  /** The newest entries first; `action` keeps only actions starting with it. */
  async list(options: { limit: number; action?: string }): Promise<AuditEntry[]> {
    if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > MAX_LIST) {
      throw new InputError(`the limit must be a whole number from 1 to ${MAX_LIST}`);
    }
    return this.deps.store.audit.list({ limit: options.limit, action: options.action || undefined });
  }

  /**
   * A page of entries matching every filter given, newest first, and where the next page
   * starts (null on the last). InputError for a bad page size or a time range that ends
   * before it starts.
   */
  async search(filter: AuditFilter): Promise<{ items: AuditEntry[]; next: { at: number; id: number } | null }> {
    if (!Number.isSafeInteger(filter.limit) || filter.limit < 1 || filter.limit > 500)
      throw new InputError('the page size must be a whole number from 1 to 500');
    if (filter.from !== undefined && filter.to !== undefined && filter.to <= filter.from) throw new InputError('the time range ends before it starts');
    const clean = (text: string | undefined) => text?.trim() || undefined;
    const rows = await this.deps.store.audit.search({
      ...filter,
      actor: clean(filter.actor),
      action: clean(filter.action),
      object: clean(filter.object),
      limit: filter.limit + 1,
    });
    const items = rows.slice(0, filter.limit);
    const last = items.at(-1);
    return { items, next: rows.length > filter.limit && last ? { at: last.at, id: last.id } : null };
  }
}

/** One line (a log line must not be forged by a newline in a reason), at most `bytes` of UTF-8. */
function clip(text: string, bytes: number): string {
  return truncateUtf8(text.replace(/[\u0000-\u001f\u007f]+/g, ' '), bytes);
}
