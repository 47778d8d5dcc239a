import { readFileSync } from 'node:fs';
import type { MessageExt } from '../../../src/common/message.js';
import type { EncodableMessage } from '../../../src/common/codec/index.js';
import { vectorPath } from '../../support/vectors.js';

export interface VectorHost {
  ip: string;
  port: number;
  addressHex?: string;
}

export interface VectorFields {
  topic: string;
  flag: number;
  bodyHex: string | null;
  properties: [string, string | null][] | null;
  queueId: number;
  queueOffset: string;
  commitLogOffset: string;
  sysFlag: number;
  bornTimestamp: string;
  bornHost: VectorHost;
  storeTimestamp: string;
  storeHost: VectorHost;
  reconsumeTimes: number;
  preparedTransactionOffset: string;
  bodyCRC: number;
  storeSize: number;
}

export interface VectorDecoded {
  storeSize: number;
  bodyCRC: number;
  queueId: number;
  flag: number;
  queueOffset: string;
  commitLogOffset: string;
  sysFlag: number;
  bornTimestamp: string;
  bornHost: VectorHost;
  storeTimestamp: string;
  storeHost: VectorHost;
  reconsumeTimes: number;
  preparedTransactionOffset: string;
  bodyHex: string | null;
  topic: string;
  properties: Record<string, string> | null;
  msgId: string;
  clientMsgId?: string;
}

export interface CodecCase {
  id: string;
  kind: 'encode+decode' | 'decode-only';
  group: string;
  note?: string;
  fields?: VectorFields;
  needCompress?: boolean;
  propertiesString?: string;
  hex: string;
  error?: string;
  length?: number;
  decoded?: VectorDecoded | null;
  clientMsgId?: string | null;
  offsetMsgId?: string;
  decodedWithoutDecompress?: { bodyHex: string | null; sysFlag: number };
  decodeWithCrcCheckOk?: boolean;
  decodePropertiesResult?: Record<string, string> | null;
}

export interface CodecVectors {
  cases: CodecCase[];
  multiMessageBodies: { note: string; hex: string; decoded: VectorDecoded[] }[];
  messageIds: {
    ip: string;
    port: number;
    offset: string;
    msgId: string;
    msgIdViaBuffer?: string;
    decodedHost: VectorHost;
    decodedOffset: string;
  }[];
  messageIdDecode: { msgId: string; decodedHost?: VectorHost; decodedOffset?: string; error?: string }[];
  uniqIds: { uniqId: string; ip: string; ipHex: string; pid: number }[];
  propertiesStrings: { propertiesString: string; map: Record<string, string> }[];
  batchBodies: BatchVector[];
}

export interface BatchMessageVector {
  flag: number;
  bodyHex: string;
  properties: [string, string | null][] | Record<string, string> | null;
}

export type BatchVector = { kind: string; hex: string } & Partial<BatchMessageVector> & {
    messages?: BatchMessageVector[];
    decoded?: BatchMessageVector[];
  };

export const codecVectors = (): CodecVectors =>
  JSON.parse(readFileSync(vectorPath('message-codec-sample.json'), 'utf8')) as CodecVectors;

/** A vector's 64-bit decimal string as a number, or null when it is not a safe integer. */
export function long(s: string | number): number | null {
  const n = Number(s);
  return Number.isSafeInteger(n) && BigInt(s) === BigInt(n) ? n : null;
}

export const hexBuf = (hex: string | null | undefined): Buffer => Buffer.from(hex ?? '', 'hex');

/** Properties listed in order, as a Map (keeps the write order of the vector). */
export const propsMap = (list: [string, string | null][] | null): Map<string, string | null> | null =>
  list === null ? null : new Map(list);

/** Whether every 64-bit field of a vector is a safe integer. */
export function allSafe(f: { [k: string]: unknown }, names: string[]): boolean {
  return names.every((n) => long(f[n] as string) !== null);
}

export const LONG_FIELDS = [
  'queueOffset',
  'commitLogOffset',
  'bornTimestamp',
  'storeTimestamp',
  'preparedTransactionOffset',
];

export function toEncodable(f: VectorFields): EncodableMessage {
  return {
    topic: f.topic,
    flag: f.flag,
    body: f.bodyHex === null ? null : hexBuf(f.bodyHex),
    properties: propsMap(f.properties),
    queueId: f.queueId,
    queueOffset: Number(f.queueOffset),
    commitLogOffset: Number(f.commitLogOffset),
    sysFlag: f.sysFlag,
    bornTimestamp: Number(f.bornTimestamp),
    bornHost: { ip: f.bornHost.ip, port: f.bornHost.port },
    storeTimestamp: Number(f.storeTimestamp),
    storeHost: { ip: f.storeHost.ip, port: f.storeHost.port },
    reconsumeTimes: f.reconsumeTimes,
    preparedTransactionOffset: Number(f.preparedTransactionOffset),
    bodyCRC: f.bodyCRC,
    storeSize: f.storeSize,
  };
}

/** Our decoded message in the vector's shape (numbers for 64-bit fields, hex body). */
export function comparable(m: MessageExt): Record<string, unknown> {
  return {
    storeSize: m.storeSize,
    bodyCRC: m.bodyCRC,
    queueId: m.queueId,
    flag: m.flag,
    queueOffset: m.queueOffset,
    commitLogOffset: m.commitLogOffset,
    sysFlag: m.sysFlag,
    bornTimestamp: m.bornTimestamp,
    bornHost: m.bornHost,
    storeTimestamp: m.storeTimestamp,
    storeHost: m.storeHost,
    reconsumeTimes: m.reconsumeTimes,
    preparedTransactionOffset: m.preparedTransactionOffset,
    bodyHex: m.body === null ? null : m.body.toString('hex'),
    topic: m.topic,
    properties: m.properties === null ? null : { ...m.properties },
    msgId: m.offsetMsgId,
  };
}

/** The vector's decoded message in our shape. */
export function expected(d: VectorDecoded): Record<string, unknown> {
  return {
    storeSize: d.storeSize,
    bodyCRC: d.bodyCRC,
    queueId: d.queueId,
    flag: d.flag,
    queueOffset: Number(d.queueOffset),
    commitLogOffset: Number(d.commitLogOffset),
    sysFlag: d.sysFlag,
    bornTimestamp: Number(d.bornTimestamp),
    bornHost: { ip: d.bornHost.ip, port: d.bornHost.port },
    storeTimestamp: Number(d.storeTimestamp),
    storeHost: { ip: d.storeHost.ip, port: d.storeHost.port },
    reconsumeTimes: d.reconsumeTimes,
    preparedTransactionOffset: Number(d.preparedTransactionOffset),
    bodyHex: d.bodyHex === null || d.bodyHex === '' ? null : d.bodyHex,
    topic: d.topic,
    properties: d.properties === null ? null : { ...d.properties },
    msgId: d.msgId,
  };
}
