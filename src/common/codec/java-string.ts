/**
 * Java string semantics the wire depends on: `String.hashCode` (the tags hash code stored in the
 * consume queue) and Java's UTF-8 encoder, which writes an unpaired surrogate as `?` (0x3f) where
 * Node and TextEncoder write U+FFFD.
 * @pure
 */

/**
 * Java's `String.hashCode` over UTF-16 code units, `h = 31*h + c` with 32-bit wrap-around: a signed
 * 32-bit number. RocketMQ stores it, sign-extended, as the consume-queue tags code.
 */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The consume-queue tags code of a tag (RocketMQ's `tagsString2tagsCode`): 0 for a missing or empty
 * tag, otherwise `String.hashCode` of the whole tag string.
 */
export function tagsHashCode(tag: string | null | undefined): number {
  return tag ? javaStringHashCode(tag) : 0;
}

/** True when `s` holds a UTF-16 surrogate that is not part of a valid pair. */
export function hasUnpairedSurrogate(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

/** The string Java would read back after writing `s` as UTF-8: each unpaired surrogate becomes `?`. */
export function javaUtf8RoundTrip(s: string): string {
  return hasUnpairedSurrogate(s)
    ? s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '?')
    : s;
}

/** Java's UTF-8 encoding of `s` (unpaired surrogates written as `?`). */
export function javaUtf8Encode(s: string): Buffer {
  return Buffer.from(javaUtf8RoundTrip(s), 'utf8');
}

/** Byte length of Java's UTF-8 encoding of `s`. */
export function javaUtf8Length(s: string): number {
  return Buffer.byteLength(javaUtf8RoundTrip(s), 'utf8');
}
