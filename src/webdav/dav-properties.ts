import type { DavProperty, MetadataStore } from '../db/repositories/repositories.js';
import type { Account } from '../domain/types.js';

/** The WebDAV namespace. */
const DAV = 'DAV:';

/**
 * The live properties the server computes (PROPFIND): a PROPPATCH may neither set nor
 * remove them (RFC 4918 9.2, DAV:cannot-modify-protected-property). DAV:displayname is
 * among them although RFC 4918 15.2 would let it be written: here it is the name in the
 * path, which only a MOVE changes.
 */
export const LIVE_PROPERTY_NAMES = [
  'resourcetype',
  'getcontentlength',
  'getcontenttype',
  'getetag',
  'getlastmodified',
  'creationdate',
  'displayname',
  'supportedlock',
  'lockdiscovery',
  'quota-available-bytes',
  'quota-used-bytes',
] as const;

/** One of the live properties. */
export type LivePropertyName = (typeof LIVE_PROPERTY_NAMES)[number];

const LIVE = new Set<string>(LIVE_PROPERTY_NAMES);

/** Whether a property is live (computed, protected) rather than dead (stored). */
export function isLiveProperty(namespace: string, name: string): name is LivePropertyName {
  return namespace === DAV && LIVE.has(name);
}

/*
 * The bounds of what one resource holds: a PROPFIND reads whole resources' properties at
 * once (a listing, in batches, propfind-handler.ts), so what one resource holds in all is
 * what bounds the memory of a request, not the value alone.
 */

/** Dead properties one resource holds at most. */
export const MAX_PROPERTIES_PER_RESOURCE = 100;
/** The largest value of one dead property, in bytes of its XML. */
export const MAX_VALUE_BYTES = 16 * 1024;
/** The most bytes of values (their XML) one resource holds in all its dead properties. */
export const MAX_TOTAL_VALUE_BYTES = 64 * 1024;
/** The longest namespace URI of a dead property, in bytes. */
export const MAX_NAMESPACE_BYTES = 1024;
/** The longest local name of a dead property, in bytes. */
export const MAX_NAME_BYTES = 255;

/** One step of a PROPPATCH, in the order the request gives them (RFC 4918 9.2). */
export type PropertyUpdate = { action: 'set'; property: DavProperty } | { action: 'remove'; namespace: string; name: string };

/**
 * Why one step of a PROPPATCH cannot be made: a live property ('protected'), a value over
 * MAX_VALUE_BYTES ('too-large'), a name over its bounds ('too-long'), more than
 * MAX_PROPERTIES_PER_RESOURCE once done ('too-many'), values over MAX_TOTAL_VALUE_BYTES
 * in all once done ('too-much'); 'failed-dependency' for a step that was fine but not
 * made because another failed (all or nothing).
 */
export type UpdateProblem = 'protected' | 'too-large' | 'too-long' | 'too-many' | 'too-much' | 'failed-dependency';

/** What became of one step: `problem` null when it was made. */
export interface UpdateOutcome {
  namespace: string;
  name: string;
  problem: UpdateProblem | null;
}

/**
 * Dead properties of an account's resources (RFC 4918 4, 9.2): what PROPPATCH stores,
 * PROPFIND shows, COPY copies, a MOVE keeps and a DELETE drops. A resource is named by its
 * key (dav-tree.ts resourceKey: what it is, not where it is).
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

  /**
   * A PROPPATCH (RFC 4918 9.2): every step in document order, all or none. A step that
   * cannot be made fails the whole request: nothing is written, and every other step is
   * 'failed-dependency'. The check and the writes are one transaction that holds the
   * account's tree lock (locks.davTree, as LOCK does), so two PROPPATCHes on one resource
   * cannot together pass MAX_PROPERTIES_PER_RESOURCE or MAX_TOTAL_VALUE_BYTES.
   */
  async update(owner: Account, key: string, updates: PropertyUpdate[]): Promise<UpdateOutcome[]> {
    const refused = updates.map(problemOf);
    if (refused.some((problem) => problem !== null)) return outcomes(updates, refused);
    return this.deps.store.transaction(async (repos) => {
      await repos.locks.davTree(owner.id);
      // The bytes of each value held, by name, as they will be once every step is made.
      const held = new Map(
        (await repos.davProperties.list(owner.id, key)).map((property) => [nameKey(property.namespace, property.name), Buffer.byteLength(property.valueXml)]),
      );
      const before = new Set(held.keys());
      for (const update of updates) {
        if (update.action === 'set') held.set(nameKey(update.property.namespace, update.property.name), Buffer.byteLength(update.property.valueXml));
        else held.delete(nameKey(update.namespace, update.name));
      }
      let total = 0;
      for (const bytes of held.values()) total += bytes;
      if (total > MAX_TOTAL_VALUE_BYTES) {
        // Every step that sets a value adds to the total: those are the ones refused.
        return outcomes(
          updates,
          updates.map((update) => (update.action === 'set' ? ('too-much' as const) : null)),
        );
      }
      if (held.size > MAX_PROPERTIES_PER_RESOURCE) {
        // The steps that add a name the resource did not have are the ones past the bound.
        const tooMany = updates.map((update) =>
          update.action === 'set' && !before.has(nameKey(update.property.namespace, update.property.name)) ? ('too-many' as const) : null,
        );
        return outcomes(updates, tooMany);
      }
      for (const update of updates) {
        if (update.action === 'set') await repos.davProperties.set(owner.id, key, [update.property]);
        else await repos.davProperties.remove(owner.id, key, [{ namespace: update.namespace, name: update.name }]);
      }
      return outcomes(
        updates,
        updates.map(() => null),
      );
    });
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

/** Why a step cannot be made whatever the resource holds; null when it can. */
function problemOf(update: PropertyUpdate): UpdateProblem | null {
  const [namespace, name] = update.action === 'set' ? [update.property.namespace, update.property.name] : [update.namespace, update.name];
  if (isLiveProperty(namespace, name)) return 'protected';
  if (Buffer.byteLength(namespace) > MAX_NAMESPACE_BYTES || Buffer.byteLength(name) > MAX_NAME_BYTES) return 'too-long';
  if (update.action === 'set' && Buffer.byteLength(update.property.valueXml) > MAX_VALUE_BYTES) return 'too-large';
  return null;
}

/** Each step's outcome: its own problem, or 'failed-dependency' when another step failed. */
function outcomes(updates: PropertyUpdate[], problems: (UpdateProblem | null)[]): UpdateOutcome[] {
  const failed = problems.some((problem) => problem !== null);
  return updates.map((update, index) => {
    const [namespace, name] = update.action === 'set' ? [update.property.namespace, update.property.name] : [update.namespace, update.name];
    return { namespace, name, problem: problems[index] ?? (failed ? 'failed-dependency' : null) };
  });
}

function nameKey(namespace: string, name: string): string {
  return JSON.stringify([namespace, name]);
}
