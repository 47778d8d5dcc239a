import { readFileSync } from 'node:fs';
import { tagsHashCode, javaUtf8RoundTrip, javaStringHashCode } from '../../../src/common/codec/java-string.js';
import { vectorPath } from '../../support/vectors.js';

interface TagHashCase {
  tag: string;
  hashCode: number;
  tagsCode: number | string;
  afterUtf8RoundTrip?: string;
  afterUtf8RoundTripTagsCode?: number | string;
}

const data = JSON.parse(readFileSync(vectorPath('taghash-sample.json'), 'utf8')) as { cases: TagHashCase[] };

describe('tags hash code (RocketMQ: tagsString2tagsCode = String.hashCode)', () => {
  it.each(data.cases.map((c) => [JSON.stringify(c.tag), c] as const))('%s', (_name, c) => {
    expect(javaStringHashCode(c.tag)).toBe(c.hashCode);
    expect(tagsHashCode(c.tag)).toBe(Number(c.tagsCode));
    if (c.afterUtf8RoundTrip !== undefined) {
      expect(javaUtf8RoundTrip(c.tag)).toBe(c.afterUtf8RoundTrip);
      expect(tagsHashCode(javaUtf8RoundTrip(c.tag))).toBe(Number(c.afterUtf8RoundTripTagsCode));
    }
  });
});
