import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** Parses an Atom body with a real XML parser, asserting it is well-formed. */
export function parseAtom(body: string): any {
  const valid = XMLValidator.validate(body);
  assert.equal(valid, true, `not well-formed XML: ${JSON.stringify(valid)}\n${body}`);
  return new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false, trimValues: false }).parse(body);
}
