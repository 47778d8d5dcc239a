/**
 * Http1ResponseParser: every answer gives the same result whatever the split of its bytes; malformed
 * answers and oversized header sections throw an Error naming the problem.
 */
import { Http1ResponseParser, type Http1Response } from '../../../src/remoting/http1-response-parser.js';

/** Feeds `bytes` in the pieces `cuts` make; `close` ends the connection after them. */
function parse(bytes: Buffer, cuts: number[], close = false, max?: number): Http1Response | undefined {
  const p = new Http1ResponseParser(max);
  let from = 0;
  let res: Http1Response | undefined;
  for (const cut of [...cuts, bytes.length]) {
    const r = p.push(bytes.subarray(from, cut));
    if (r) {
      expect(res).toBeUndefined();
      res = r;
    }
    from = cut;
  }
  if (close && !res) res = p.end();
  return res;
}

/** The answer for every split of `text` in two and in three pieces (every byte offset). */
function everySplit(text: string, close = false): Http1Response[] {
  const bytes = Buffer.from(text, 'latin1');
  const out: Http1Response[] = [];
  for (let i = 0; i <= bytes.length; i++) {
    out.push(parse(bytes, [i], close) as Http1Response);
    for (let j = i; j <= bytes.length; j += 7) out.push(parse(bytes, [i, j], close) as Http1Response);
  }
  return out;
}

const expectAll = (answers: Http1Response[], status: number, body: string, keepAlive: boolean): void => {
  for (const a of answers) {
    expect(a).toBeDefined();
    expect({ status: a.status, body: a.body.toString('latin1'), keepAlive: a.keepAlive }).toEqual({
      status,
      body,
      keepAlive,
    });
  }
};

test('Content-Length: every split gives the same answer; HTTP/1.1 keeps the connection', () => {
  const text = 'HTTP/1.1 200 OK\r\nContent-Type: x\r\ncontent-LENGTH: 11\r\n\r\nhello world';
  expectAll(everySplit(text), 200, 'hello world', true);
});

test('chunked with extensions and trailers, every split', () => {
  const text =
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
    '5;name=value\r\nhello\r\n1 ; ext\r\n \r\nB\r\nchunked bod\r\n0;last\r\nX-Trailer: t\r\nX-Other: u\r\n\r\n';
  expectAll(everySplit(text), 200, 'hello chunked bod', true);
});

test('1xx interim answers are skipped, every split', () => {
  const text =
    'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\nX: y\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok';
  expectAll(everySplit(text), 201, 'ok', true);
});

test('a body without length runs until the close, and the connection is not reused', () => {
  const text = 'HTTP/1.1 200 OK\r\nContent-Type: x\r\n\r\nall of this until close';
  expectAll(everySplit(text, true), 200, 'all of this until close', false);
  // A transfer coding that is not chunked last also runs until the close.
  expectAll(everySplit('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzz', true), 200, 'zz', false);
});

test('Connection: close, HTTP/1.0 and surplus bytes mean the connection is not reused', () => {
  expectAll(
    everySplit('HTTP/1.1 400 Bad\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\n{}'),
    400,
    '{}',
    false,
  );
  expectAll(everySplit('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx'), 200, 'x', false);
  const p = new Http1ResponseParser();
  const res = p.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1'));
  expect(res?.keepAlive).toBe(false);
  expect(p.surplus).toBe(true);
});

test('204, Content-Length 0, and a Transfer-Encoding next to a Content-Length', () => {
  expectAll(everySplit('HTTP/1.1 204 No Content\r\n\r\n'), 204, '', true);
  expectAll(everySplit('HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n'), 200, '', true);
  expectAll(
    everySplit('HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n'),
    200,
    'ab',
    false,
  );
});

test('bare LF line ends are read too', () => {
  expectAll(everySplit('HTTP/1.1 200 OK\nContent-Length: 2\n\nok'), 200, 'ok', true);
});

test('the parser is reused for the next answer after reset()', () => {
  const p = new Http1ResponseParser();
  const a = p.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na'));
  expect(a?.body.toString()).toBe('a');
  p.reset();
  expect(p.started).toBe(false);
  const b = p.push(Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nbb'));
  expect(b).toMatchObject({ status: 404, keepAlive: true });
  expect(b?.body.toString()).toBe('bb');
});

test('a body that came in one read is a view of it, not a copy', () => {
  const read = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc');
  const res = new Http1ResponseParser().push(read) as Http1Response;
  expect(res.body.buffer).toBe(read.buffer);
});

describe('malformed answers throw, naming the problem', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['status line', 'HTTP/2 200 OK\r\n\r\n', /bad status line "HTTP\/2 200 OK"/],
    ['status code', 'HTTP/1.1 2000 OK\r\n\r\n', /bad status line/],
    ['not HTTP', 'SSH-2.0-OpenSSH\r\n\r\n', /bad status line "SSH-2.0-OpenSSH"/],
    ['header without colon', 'HTTP/1.1 200 OK\r\nContent-Length 5\r\n\r\n', /bad header line "Content-Length 5"/],
    ['header name', 'HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n', /bad header line/],
    ['folded header', 'HTTP/1.1 200 OK\r\nX: a\r\n  b\r\n\r\n', /folded header line/],
    ['control character', 'HTTP/1.1 200 OK\r\nX: a\x00b\r\n\r\n', /bad header value/],
    ['content-length', 'HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n', /bad Content-Length "1x"/],
    ['negative length', 'HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /bad Content-Length/],
    [
      'conflicting lengths',
      'HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      /conflicting Content-Length/,
    ],
    ['chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /bad chunk-size line "zz"/],
    [
      'chunk size too large',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n',
      /bad chunk-size line/,
    ],
    [
      'no CRLF after a chunk',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcd\r\n',
      /no line end after a chunk's data/,
    ],
    ['bad trailer', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nnope\r\n\r\n', /bad trailer line/],
    ['101', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', /unrequested 101/],
  ];
  test.each(cases)('%s, at every split', (_name, text, message) => {
    const bytes = Buffer.from(text, 'latin1');
    for (let i = 0; i <= bytes.length; i++) {
      expect(() => parse(bytes, [i])).toThrow(message);
      expect(() => parse(bytes, [i])).toThrow(/^malformed HTTP response: /);
    }
  });
});

test('a header section over the limit throws, even before its end arrives', () => {
  const p = new Http1ResponseParser(1024);
  p.push(Buffer.from('HTTP/1.1 200 OK\r\n'));
  expect(() => {
    for (let i = 0; i < 100; i++) p.push(Buffer.from(`X-Filler-${i}: ${'v'.repeat(20)}\r\n`));
  }).toThrow('malformed HTTP response: the header section exceeds 1024 bytes');
  // One endless line is cut off as well, split into many reads.
  const q = new Http1ResponseParser(1024);
  expect(() => {
    for (let i = 0; i < 100; i++) q.push(Buffer.alloc(100, 0x41));
  }).toThrow(/the header section exceeds 1024 bytes/);
  // The default limit is 64 KiB: a section just under it is read.
  const big = `HTTP/1.1 200 OK\r\nX-Big: ${'b'.repeat(60 * 1024)}\r\nContent-Length: 1\r\n\r\nz`;
  expect(new Http1ResponseParser().push(Buffer.from(big))?.body.toString()).toBe('z');
  expect(() =>
    new Http1ResponseParser().push(Buffer.from(big.replace('X-Big', `X-Big: ${'c'.repeat(5000)}\r\nX-B`))),
  ).toThrow(/header section exceeds 65536 bytes/);
  // The trailers and a chunk-size line have the same bound.
  const t = new Http1ResponseParser(1024);
  expect(() =>
    t.push(Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;${'e'.repeat(2000)}\r\n`)),
  ).toThrow(/chunk-size line exceeds 1024 bytes/);
});

test('a close before the answer ends throws, saying where it was cut', () => {
  expect(() => new Http1ResponseParser().end()).toThrow('the connection closed before an answer arrived');
  const cut = (text: string): Http1ResponseParser => {
    const p = new Http1ResponseParser();
    expect(p.push(Buffer.from(text))).toBeUndefined();
    return p;
  };
  expect(() => cut('HTTP/1.1 200 OK\r\nContent-Le').end()).toThrow(
    /closed in the middle of an answer \(in its headers\)/,
  );
  expect(() => cut('HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab').end()).toThrow(
    /with 3 of its Content-Length bytes missing/,
  );
  expect(() => cut('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab').end()).toThrow(
    /in its chunked body/,
  );
  expect(() => cut('HTTP/1.1 100 Continue\r\n\r\n').end()).toThrow(/in its headers/);
});
