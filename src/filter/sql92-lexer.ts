/**
 * Lexer of RocketMQ's SQL92 filter language, following the token rules of its JavaCC grammar
 * (SelectorParser.jj) including its longest-match quirks:
 *
 *   whitespace   space, tab, LF, CR, FF (nothing else: NBSP and VT are errors)
 *   comments     `-- … EOL` (only when a line break follows: `--x` at the very end is two minus
 *                signs) and `/* … *\/` (not nested)
 *   keywords     NOT AND OR BETWEEN IN TRUE FALSE NULL IS CONTAINS STARTSWITH ENDSWITH, any case
 *   identifier   [A-Za-z_$][A-Za-z0-9_$]*  (case-sensitive; no `.` or `-`)
 *   decimal      `0` | [1-9][0-9]*[lL]?     (so `01` is `0` then `1`, and `0x10` is `0` then `x10`)
 *   float        d+.d*[exp] | .d+[exp] | d+exp, exp = [eE][+-]?d+
 *   string       '…' with '' for a quote, no backslash escapes
 *   operators    = <> > >= < <= ( ) , + -
 * @pure
 */
import { Sql92ParseError } from './errors.js';

export type TokenKind =
  | 'NOT'
  | 'AND'
  | 'OR'
  | 'BETWEEN'
  | 'IN'
  | 'TRUE'
  | 'FALSE'
  | 'NULL'
  | 'IS'
  | 'CONTAINS'
  | 'STARTSWITH'
  | 'ENDSWITH'
  | 'DECIMAL'
  | 'FLOAT'
  | 'STRING'
  | 'ID'
  | '='
  | '<>'
  | '>'
  | '>='
  | '<'
  | '<='
  | '('
  | ')'
  | ','
  | '+'
  | '-'
  | 'EOF';

export interface Token {
  kind: TokenKind;
  /** Index of the first code unit of the token in the source. */
  start: number;
  /** The token's text; for STRING the decoded value (quotes removed, '' unescaped). */
  text: string;
}

const KEYWORDS: ReadonlySet<string> = new Set([
  'NOT',
  'AND',
  'OR',
  'BETWEEN',
  'IN',
  'TRUE',
  'FALSE',
  'NULL',
  'IS',
  'CONTAINS',
  'STARTSWITH',
  'ENDSWITH',
]);

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
const isIdStart = (c: number): boolean =>
  (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x24;
const isIdPart = (c: number): boolean => isIdStart(c) || isDigit(c);

/** A human-readable description of a token, for error messages. */
export function describeToken(t: Token): string {
  switch (t.kind) {
    case 'EOF':
      return 'end of input';
    case 'STRING':
      return 'string literal';
    case 'ID':
      return `identifier '${t.text}'`;
    case 'DECIMAL':
    case 'FLOAT':
      return `number ${t.text}`;
    default:
      return `'${t.text}'`;
  }
}

function describeChar(s: string, i: number): string {
  const c = s.charCodeAt(i);
  return c >= 0x21 && c <= 0x7e ? `'${s[i]}'` : `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Splits `src` into tokens (ending with an EOF token), or throws {@link Sql92ParseError}. */
export function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  const len = src.length;
  let i = 0;
  let nextBreak = -1;
  while (i < len) {
    const c = src.charCodeAt(i);
    // whitespace
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c) {
      i++;
      continue;
    }
    const start = i;
    if (c === 0x2d /* - */) {
      if (src.charCodeAt(i + 1) === 0x2d) {
        // RocketMQ: a line comment needs its line break; without one, `--` is two minus signs.
        // (The next break is cached: i only grows, so a run of minus signs stays linear.)
        if (nextBreak < i + 2) nextBreak = findBreak(src, i + 2);
        const j = nextBreak;
        if (j < len) {
          i = src.charCodeAt(j) === 0x0d && src.charCodeAt(j + 1) === 0x0a ? j + 2 : j + 1;
          continue;
        }
      }
      tokens.push({ kind: '-', start, text: '-' });
      i++;
      continue;
    }
    if (c === 0x2f /* / */) {
      if (src.charCodeAt(i + 1) === 0x2a) {
        const end = src.indexOf('*/', i + 2);
        if (end >= 0) {
          i = end + 2;
          continue;
        }
        throw new Sql92ParseError('Unterminated comment', start, "'*/' to close the comment");
      }
      throw new Sql92ParseError(`Unexpected character '/'`, start, 'a valid token');
    }
    if (isIdStart(c)) {
      let j = i + 1;
      while (j < len && isIdPart(src.charCodeAt(j))) j++;
      const text = src.slice(i, j);
      const upper = text.toUpperCase();
      tokens.push({ kind: KEYWORDS.has(upper) ? (upper as TokenKind) : 'ID', start, text });
      i = j;
      continue;
    }
    if (isDigit(c) || (c === 0x2e && isDigit(src.charCodeAt(i + 1)))) {
      i = lexNumber(src, i, tokens);
      continue;
    }
    if (c === 0x27 /* ' */) {
      let j = i + 1;
      let value = '';
      let segment = j;
      for (;;) {
        if (j >= len) throw new Sql92ParseError('Unterminated string literal', start, "a closing quote (')");
        if (src.charCodeAt(j) === 0x27) {
          if (src.charCodeAt(j + 1) === 0x27) {
            value += src.slice(segment, j + 1);
            j += 2;
            segment = j;
            continue;
          }
          value += src.slice(segment, j);
          j++;
          break;
        }
        j++;
      }
      tokens.push({ kind: 'STRING', start, text: value });
      i = j;
      continue;
    }
    const next = src.charCodeAt(i + 1);
    switch (c) {
      case 0x3d:
        tokens.push({ kind: '=', start, text: '=' });
        i++;
        continue;
      case 0x3c:
        if (next === 0x3e) tokens.push({ kind: '<>', start, text: '<>' });
        else if (next === 0x3d) tokens.push({ kind: '<=', start, text: '<=' });
        else tokens.push({ kind: '<', start, text: '<' });
        i += next === 0x3e || next === 0x3d ? 2 : 1;
        continue;
      case 0x3e:
        if (next === 0x3d) tokens.push({ kind: '>=', start, text: '>=' });
        else tokens.push({ kind: '>', start, text: '>' });
        i += next === 0x3d ? 2 : 1;
        continue;
      case 0x28:
        tokens.push({ kind: '(', start, text: '(' });
        i++;
        continue;
      case 0x29:
        tokens.push({ kind: ')', start, text: ')' });
        i++;
        continue;
      case 0x2c:
        tokens.push({ kind: ',', start, text: ',' });
        i++;
        continue;
      case 0x2b:
        tokens.push({ kind: '+', start, text: '+' });
        i++;
        continue;
      default:
        throw new Sql92ParseError(`Unexpected character ${describeChar(src, i)}`, start, 'a valid token');
    }
  }
  tokens.push({ kind: 'EOF', start: len, text: '' });
  return tokens;
}

/** Index of the first LF or CR at or after `from`, or the length of `src`. */
function findBreak(src: string, from: number): number {
  let j = from;
  while (j < src.length && src.charCodeAt(j) !== 0x0a && src.charCodeAt(j) !== 0x0d) j++;
  return j;
}

/** Scans the longest DECIMAL or FLOAT literal at `i`; returns the index after it. */
function lexNumber(src: string, i: number, tokens: Token[]): number {
  const len = src.length;
  const start = i;
  let j = i;
  while (j < len && isDigit(src.charCodeAt(j))) j++;
  const intEnd = j;
  let isFloat = false;
  if (j < len && src.charCodeAt(j) === 0x2e) {
    // `d+.d*` or `.d+` (the caller checked that a bare `.` is followed by a digit)
    isFloat = true;
    j++;
    while (j < len && isDigit(src.charCodeAt(j))) j++;
  }
  // an exponent only counts when at least one digit follows
  if (j < len && (src.charCodeAt(j) === 0x65 || src.charCodeAt(j) === 0x45)) {
    let k = j + 1;
    if (k < len && (src.charCodeAt(k) === 0x2b || src.charCodeAt(k) === 0x2d)) k++;
    if (k < len && isDigit(src.charCodeAt(k))) {
      while (k < len && isDigit(src.charCodeAt(k))) k++;
      isFloat = true;
      j = k;
    }
  }
  if (isFloat) {
    tokens.push({ kind: 'FLOAT', start, text: src.slice(start, j) });
    return j;
  }
  // DECIMAL: a leading 0 is the whole literal (no octal), else digits with an optional l/L
  if (src.charCodeAt(start) === 0x30) {
    tokens.push({ kind: 'DECIMAL', start, text: '0' });
    return start + 1;
  }
  j = intEnd;
  if (j < len && (src.charCodeAt(j) === 0x6c || src.charCodeAt(j) === 0x4c)) j++;
  tokens.push({ kind: 'DECIMAL', start, text: src.slice(start, j) });
  return j;
}
