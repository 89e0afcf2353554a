import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/**
 * A document as a parser returns it (fast-xml-parser's parse() and JSON.parse are typed
 * `any`): elements or keys by name, attributes as `@name`, a repeated element as an array.
 * Tests walk it along the shape they assert; typing every walk would mean a cast or a
 * narrowing per step, checking less than the assertions already do.
 */
// biome-ignore lint/suspicious/noExplicitAny: a parsed document has no static shape; the tests' assertions check it at run time
export type ParsedDocument = any;

/** Parses an Atom body with a real XML parser, asserting it is well-formed. */
export function parseAtom(body: string): ParsedDocument {
  const valid = XMLValidator.validate(body);
  assert.equal(valid, true, `not well-formed XML: ${JSON.stringify(valid)}\n${body}`);
  return new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, trimValues: false }).parse(body);
}
