/**
 * JSON as RocketMQ's servers (fastjson) may write it: standard JSON, except that object keys which
 * are numbers can be unquoted — a 4.9.x NameServer answers an older client's route query with
 * `"brokerAddrs":{0:"10.0.0.1:10911"}`, and `consumerOffset.json` is written the same way. Such keys
 * are quoted before `JSON.parse`; strings are left untouched.
 * @pure
 */

/** Quotes the unquoted numeric object keys of `text` (outside strings), leaving the rest as written. */
export function quoteNumericKeys(text: string): string {
  let out = '';
  let last = 0;
  let inString = false;
  const open: number[] = []; // the enclosing brackets: '{' or '['
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // A backslash escapes the next character.
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
      continue;
    }
    if (c === 0x22) {
      inString = true;
      continue;
    }
    if (c === 0x7b || c === 0x5b) open.push(c);
    else if (c === 0x7d || c === 0x5d) open.pop();
    // A key follows '{', or ',' inside an object.
    if (c !== 0x7b && !(c === 0x2c && open[open.length - 1] === 0x7b)) continue;
    let j = i + 1;
    while (j < text.length && /\s/.test(text[j]!)) j++;
    const start = j;
    if (text[j] === '-') j++;
    while (j < text.length && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x39) j++;
    if (j === start || (j === start + 1 && text[start] === '-')) continue;
    const end = j;
    while (j < text.length && /\s/.test(text[j]!)) j++;
    if (text[j] !== ':') continue;
    out += `${text.slice(last, start)}"${text.slice(start, end)}"`;
    last = end;
    i = end - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** `JSON.parse` that also accepts fastjson's unquoted numeric keys. Throws SyntaxError otherwise. */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const quoted = quoteNumericKeys(text);
    if (quoted === text) throw err;
    return JSON.parse(quoted);
  }
}
