/**
 * An incremental parser of HTTP/1.x responses, for the HTTP transport's connections (one answer per
 * request, no pipelining). Bytes may arrive split anywhere; the body's chunks are kept as views of the
 * reads they came in and joined once at the end.
 *
 * It reads what a server may send: a status line, headers (names case-insensitive), 1xx interim
 * answers (skipped), a body by `Content-Length`, by `Transfer-Encoding: chunked` (extensions and
 * trailers read and ignored) or until the connection closes. A malformed answer throws an Error whose
 * message names the problem; the connection that brought it is not usable afterwards.
 * @pure
 */

/** A whole answer. */
export interface Http1Response {
  status: number;
  body: Buffer;
  /** The connection may carry another request: HTTP/1.1, no `Connection: close`, the body's end known. */
  keepAlive: boolean;
}

/** Default bound of a header section (and of a chunk-size line or the trailers). */
export const MAX_HEADER_BYTES = 64 * 1024;

type State = 'head' | 'length' | 'close' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'done';

const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9][0-9]{2})(?: .*)?$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const CHUNK_SIZE_LINE = /^([0-9A-Fa-f]{1,13})[ \t]*(?:;.*)?$/;
const DIGITS = /^[0-9]{1,15}$/;

/** Whether `s` holds a control character other than a tab (a CR inside a line, a NUL, DEL). */
function hasControl(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c < 32 && c !== 9) || c === 127) return true;
  }
  return false;
}

function malformed(what: string): Error {
  return new Error(`malformed HTTP response: ${what}`);
}

/** A line's text for an error message: short and printable. */
function quote(line: string): string {
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 80)}…` : line);
}

export class Http1ResponseParser {
  readonly #maxHeaderBytes: number;
  #state: State = 'head';
  /** Bytes of a line not yet ended by LF. */
  #lineParts: Buffer[] = [];
  #lineBytes = 0;
  /** Bytes read in the current header section (head, chunk-size line or trailers). */
  #sectionBytes = 0;
  /** Any byte of this answer has arrived. */
  #started = false;
  #version = 1;
  #status = 0;
  #contentLength = -1;
  /** The transfer codings named, in order; only the last one tells how the body ends. */
  #codings: string[] = [];
  #close = false;
  #remaining = 0;
  #body: Buffer[] = [];
  #bodyBytes = 0;
  /** Bytes came after the answer's end (the server sent more than one answer). */
  #surplus = false;

  constructor(maxHeaderBytes: number = MAX_HEADER_BYTES) {
    this.#maxHeaderBytes = maxHeaderBytes;
  }

  /** Whether any byte of the current answer has arrived. */
  get started(): boolean {
    return this.#started;
  }

  /** Whether bytes came after the last answer's end: the connection must not be reused. */
  get surplus(): boolean {
    return this.#surplus;
  }

  /** Ready for the next answer on the same connection. */
  reset(): void {
    this.#state = 'head';
    this.#resetHead();
    this.#started = false;
    this.#surplus = false;
    this.#body = [];
    this.#bodyBytes = 0;
  }

  /** Reads `chunk`; returns the answer once it is whole. Throws on a malformed answer. */
  push(chunk: Buffer): Http1Response | undefined {
    if (chunk.length === 0) return undefined;
    if (this.#state === 'done') {
      this.#surplus = true;
      return undefined;
    }
    this.#started = true;
    let pos = 0;
    while (pos < chunk.length) {
      switch (this.#state) {
        case 'length':
        case 'chunk-data': {
          // A body of known length, or one chunk of a chunked body: `#remaining` bytes of it are due.
          const n = Math.min(this.#remaining, chunk.length - pos);
          this.#keep(chunk.subarray(pos, pos + n));
          pos += n;
          this.#remaining -= n;
          if (this.#remaining === 0) this.#state = this.#state === 'length' ? 'done' : 'chunk-end';
          break;
        }
        case 'close':
          this.#keep(pos === 0 ? chunk : chunk.subarray(pos));
          pos = chunk.length;
          break;
        default: {
          const end = chunk.indexOf(10, pos);
          const stop = end < 0 ? chunk.length : end + 1;
          this.#sectionBytes += stop - pos;
          if (this.#sectionBytes > this.#maxHeaderBytes) throw this.#tooLarge();
          if (end < 0) {
            this.#lineParts.push(chunk.subarray(pos));
            this.#lineBytes += chunk.length - pos;
            pos = chunk.length;
            break;
          }
          const line = this.#takeLine(chunk.subarray(pos, end));
          pos = stop;
          this.#onLine(line);
        }
      }
      if (this.#state === 'done') {
        if (pos < chunk.length) this.#surplus = true;
        return this.#answer();
      }
    }
    return undefined;
  }

  /** The connection closed: the answer when its body ran to the close, else the Error saying what was cut short. */
  end(): Http1Response {
    if (this.#state === 'close') {
      this.#state = 'done';
      return this.#answer();
    }
    if (!this.#started) throw new Error('the connection closed before an answer arrived');
    const where =
      this.#state === 'head'
        ? 'in its headers'
        : this.#state === 'length'
          ? `with ${this.#remaining} of its Content-Length bytes missing`
          : 'in its chunked body';
    throw new Error(`the connection closed in the middle of an answer (${where})`);
  }

  #tooLarge(): Error {
    const what =
      this.#state === 'head' ? 'header section' : this.#state === 'trailers' ? 'trailer section' : 'chunk-size line';
    return malformed(`the ${what} exceeds ${this.#maxHeaderBytes} bytes`);
  }

  #keep(view: Buffer): void {
    if (view.length === 0) return;
    this.#body.push(view);
    this.#bodyBytes += view.length;
  }

  /** The pending line's bytes plus `tail`, as text without its CR. */
  #takeLine(tail: Buffer): string {
    let bytes = tail;
    if (this.#lineParts.length > 0) {
      this.#lineParts.push(tail);
      bytes = Buffer.concat(this.#lineParts, this.#lineBytes + tail.length);
      this.#lineParts = [];
      this.#lineBytes = 0;
    }
    const n = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
    return bytes.toString('latin1', 0, n);
  }

  #onLine(line: string): void {
    switch (this.#state) {
      case 'head':
        return this.#status === 0 ? this.#statusLine(line) : this.#headerLine(line);
      case 'chunk-size':
        return this.#chunkSize(line);
      case 'chunk-end':
        if (line !== '') throw malformed(`no line end after a chunk's data (got ${quote(line)})`);
        this.#state = 'chunk-size';
        this.#sectionBytes = 0;
        return;
      case 'trailers':
        if (line === '') {
          this.#state = 'done';
          return;
        }
        this.#field(line, 'trailer');
        return;
      default:
        throw new Error(`HTTP response parser: no line expected in state ${this.#state}`);
    }
  }

  #statusLine(line: string): void {
    const m = STATUS_LINE.exec(line);
    if (!m || hasControl(line)) throw malformed(`bad status line ${quote(line)}`);
    this.#version = Number(m[1]);
    this.#status = Number(m[2]);
  }

  #headerLine(line: string): void {
    if (line === '') return this.#headEnd();
    const [name, value] = this.#field(line, 'header');
    switch (name) {
      case 'content-length': {
        const values = value.split(',').map((v) => v.trim());
        const first = values[0] as string;
        if (!values.every((v) => v === first && DIGITS.test(v))) throw malformed(`bad Content-Length ${quote(value)}`);
        const n = Number(first);
        if (this.#contentLength >= 0 && this.#contentLength !== n)
          throw malformed('conflicting Content-Length headers');
        this.#contentLength = n;
        return;
      }
      case 'transfer-encoding':
        for (const c of value.toLowerCase().split(',')) if (c.trim() !== '') this.#codings.push(c.trim());
        return;
      case 'connection':
        for (const t of value.toLowerCase().split(',')) if (t.trim() === 'close') this.#close = true;
        return;
      default:
        return;
    }
  }

  /** `name: value` → [lower-case name, value without surrounding whitespace]. */
  #field(line: string, kind: string): [string, string] {
    if (line.charCodeAt(0) === 32 || line.charCodeAt(0) === 9) throw malformed(`folded ${kind} line ${quote(line)}`);
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!TOKEN.test(name)) throw malformed(`bad ${kind} line ${quote(line)}`);
    const value = line.slice(colon + 1).replace(/^[ \t]+|[ \t]+$/g, '');
    if (hasControl(value)) throw malformed(`bad ${kind} value in ${quote(line)}`);
    return [name.toLowerCase(), value];
  }

  #headEnd(): void {
    const status = this.#status;
    if (status < 200) {
      // 1xx: an interim answer; the real one follows. 101 would switch protocols, which was never asked.
      if (status === 101) throw malformed('an unrequested 101 Switching Protocols');
      this.#resetHead();
      return;
    }
    if (this.#version === 0) this.#close = true;
    if (status === 204 || status === 304) {
      this.#state = 'done';
    } else if (this.#codings.length > 0) {
      // A Content-Length next to a Transfer-Encoding is ignored, and the connection not reused; a body
      // whose last coding is not chunked runs until the close.
      if (this.#contentLength >= 0) this.#close = true;
      if (this.#codings[this.#codings.length - 1] === 'chunked') {
        this.#state = 'chunk-size';
      } else {
        this.#state = 'close';
        this.#close = true;
      }
    } else if (this.#contentLength >= 0) {
      this.#remaining = this.#contentLength;
      this.#state = this.#remaining === 0 ? 'done' : 'length';
    } else {
      this.#state = 'close';
      this.#close = true;
    }
    this.#sectionBytes = 0;
  }

  #chunkSize(line: string): void {
    const m = CHUNK_SIZE_LINE.exec(line);
    if (!m) throw malformed(`bad chunk-size line ${quote(line)}`);
    const size = parseInt(m[1] as string, 16);
    this.#sectionBytes = 0;
    if (size === 0) {
      this.#state = 'trailers';
    } else {
      this.#remaining = size;
      this.#state = 'chunk-data';
    }
  }

  #resetHead(): void {
    this.#sectionBytes = 0;
    this.#version = 1;
    this.#status = 0;
    this.#contentLength = -1;
    this.#codings = [];
    this.#close = false;
    this.#lineParts = [];
    this.#lineBytes = 0;
  }

  #answer(): Http1Response {
    const chunks = this.#body;
    const body =
      chunks.length === 1
        ? (chunks[0] as Buffer)
        : chunks.length === 0
          ? Buffer.alloc(0)
          : Buffer.concat(chunks, this.#bodyBytes);
    this.#body = [];
    this.#bodyBytes = 0;
    return { status: this.#status, body, keepAlive: !this.#close && !this.#surplus };
  }
}
