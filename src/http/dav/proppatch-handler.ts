import {
  MAX_NAME_BYTES,
  MAX_NAMESPACE_BYTES,
  MAX_PROPERTIES_PER_RESOURCE,
  MAX_TOTAL_VALUE_BYTES,
  MAX_VALUE_BYTES,
  type PropertyUpdate,
  type UpdateOutcome,
  type UpdateProblem,
} from '../../webdav/dav-properties.js';
import { checkEntityTags, checkIfHeader } from './dav-conditions.js';
import { DavError } from './dav-errors.js';
import type { DavExchange } from './dav-exchange.js';
import { MULTISTATUS_END, MULTISTATUS_START, MULTISTATUS_TYPE, propertyXml, propstatXml, responseXml } from './dav-multistatus.js';
import { BadXml, DAV, elementsOf, isElement, parseXml, readXmlBody, serializeChildren } from './dav-xml.js';

/** How each outcome of a step is answered: status, precondition (RFC 4918 16) and description. */
const ANSWERS: Record<UpdateProblem | 'done', { status: number; condition: string; description: string }> = {
  done: { status: 200, condition: '', description: '' },
  protected: {
    status: 403,
    condition: '<D:cannot-modify-protected-property/>',
    description: 'A live property is computed by the server and cannot be set or removed',
  },
  'too-long': {
    status: 403,
    condition: '',
    description: `A property's namespace may be ${MAX_NAMESPACE_BYTES} bytes long at most, its name ${MAX_NAME_BYTES}`,
  },
  'too-large': { status: 507, condition: '', description: `A property's value may be ${MAX_VALUE_BYTES / 1024} KiB at most` },
  'too-many': { status: 507, condition: '', description: `A resource holds ${MAX_PROPERTIES_PER_RESOURCE} properties at most` },
  'too-much': { status: 507, condition: '', description: `A resource's property values may be ${MAX_TOTAL_VALUE_BYTES / 1024} KiB in all at most` },
  'failed-dependency': { status: 424, condition: '', description: 'Not changed, because another change of the request failed' },
};

/**
 * PROPPATCH (RFC 4918 9.2): sets and removes dead properties of one resource, in document
 * order, all or nothing (webdav/dav-properties.ts update: one transaction). Answers 207
 * with a propstat per outcome: 200 when everything was done; otherwise the steps that
 * failed with their own status (403 for a live property, with
 * DAV:cannot-modify-protected-property; 507 past the limits of webdav/dav-properties.ts:
 * a value over 16 KiB, over 64 KiB of values or 100 properties on one resource) and all others 424.
 * A value is stored as the XML it was sent as, its namespaces declared in it
 * (dav-xml.ts serializeChildren).
 */
export async function handleProppatch(dav: DavExchange): Promise<void> {
  const updates = parsePropertyUpdate(await readXmlBody(dav.request.raw));
  const { services } = dav.context;
  const target = await services.dav.tree.resolve(dav.owner, dav.path);
  checkEntityTags(dav, target);
  if (!target) throw new DavError(404, 'Nothing is at this path');
  await checkIfHeader(dav);
  await services.dav.locks.assertWritable(dav.owner, [{ path: dav.path, deep: false }], dav.submittedTokens());
  const outcomes = await services.dav.properties.update(dav.owner, target.key, updates);
  const body = `${MULTISTATUS_START}${responseXml(dav.href(target.path, target.kind !== 'file'), propstatsOf(outcomes))}${MULTISTATUS_END}`;
  dav.reply.code(207).type(MULTISTATUS_TYPE).send(body);
}

/**
 * The steps of a DAV:propertyupdate body, in document order: each property element of a
 * DAV:set's or DAV:remove's DAV:prop. Elements of other namespaces beside them are
 * ignored (RFC 4918 17); no step at all, a body that is no propertyupdate, and XML that
 * is not well-formed are BadXml (400).
 */
function parsePropertyUpdate(text: string): PropertyUpdate[] {
  if (text.trim() === '') throw new BadXml('A PROPPATCH needs a DAV:propertyupdate body');
  const root = parseXml(text);
  if (!isElement(root, DAV, 'propertyupdate')) throw new BadXml('The body of a PROPPATCH must be a DAV:propertyupdate element');
  const updates: PropertyUpdate[] = [];
  for (const step of elementsOf(root)) {
    if (step.ns !== DAV || (step.name !== 'set' && step.name !== 'remove')) continue;
    for (const prop of elementsOf(step)) {
      if (!isElement(prop, DAV, 'prop')) continue;
      for (const property of elementsOf(prop)) {
        updates.push(
          step.name === 'set'
            ? { action: 'set', property: { namespace: property.ns, name: property.name, valueXml: serializeChildren(property) } }
            : { action: 'remove', namespace: property.ns, name: property.name },
        );
      }
    }
  }
  if (updates.length === 0) throw new BadXml('The DAV:propertyupdate sets or removes no property');
  return updates;
}

/**
 * One propstat per kind of outcome, each property named once: a property set and then
 * removed in one request is answered by its failure if either step failed.
 */
function propstatsOf(outcomes: UpdateOutcome[]): string {
  const byName = new Map<string, UpdateOutcome>();
  for (const outcome of outcomes) {
    const key = JSON.stringify([outcome.namespace, outcome.name]);
    const before = byName.get(key);
    if (!before || before.problem === null || (before.problem === 'failed-dependency' && outcome.problem !== null)) byName.set(key, outcome);
  }
  const groups = new Map<UpdateProblem | 'done', string>();
  for (const outcome of byName.values()) {
    const kind = outcome.problem ?? 'done';
    groups.set(kind, (groups.get(kind) ?? '') + propertyXml(outcome));
  }
  let xml = '';
  for (const [kind, properties] of groups) {
    const answer = ANSWERS[kind];
    xml += propstatXml(answer.status, properties, answer.condition, answer.description);
  }
  return xml;
}
