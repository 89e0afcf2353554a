import type { DavProperty, MetadataStore } from '../db/repositories/repositories.js';
import type { Account } from '../domain/types.js';

/**
 * Dead properties of an account's resources (RFC 4918 4, 9.2): what PROPPATCH stores,
 * PROPFIND shows, COPY copies, a MOVE keeps and a DELETE drops. TO BE BUILT (issue 27,
 * properties part): limits on count and size, the all-or-nothing PROPPATCH.
 */
export class DavProperties {
  constructor(private readonly deps: { store: MetadataStore }) {}

  /** The properties of one resource (by its key, dav-tree.ts resourceKey). */
  list(owner: Account, key: string): Promise<DavProperty[]> {
    return this.deps.store.davProperties.list(owner.id, key);
  }

  /** The properties of several resources at once. */
  listMany(owner: Account, keys: string[]): Promise<Map<string, DavProperty[]>> {
    return this.deps.store.davProperties.listMany(owner.id, keys);
  }

  /** A COPY: the copy gets the source's properties. */
  copy(owner: Account, from: string, to: string): Promise<void> {
    return this.deps.store.davProperties.copyAll(owner.id, from, to);
  }

  /** The resource is gone: so are its properties. */
  forget(owner: Account, key: string): Promise<void> {
    return this.deps.store.davProperties.removeAll(owner.id, key);
  }
}
