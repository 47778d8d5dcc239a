import { readFileSync } from 'node:fs';
import { vectorPath } from '../../support/vectors.js';

/** The command fields RocketMQ's decoder reported. */
export interface VectorDecodedCommand {
  code: number;
  language: string | null;
  version: number;
  opaque: number;
  flag: number;
  isResponseType: boolean;
  isOnewayRPC: boolean;
  remark: string | null;
  extFields: Record<string, string | null> | null;
  extFieldsNullKey?: boolean;
  bodyLength: number | null;
  serializeTypeCurrentRPC: 'JSON' | 'ROCKETMQ' | null;
}

export interface FrameCase {
  kind: 'frame';
  id: string;
  description: string;
  serializeType: 'JSON' | 'ROCKETMQ';
  code: number;
  language: string | null;
  version: number;
  opaque: number;
  flag: number;
  remark: string | null;
  bodyHex: string | null;
  extFields: Record<string, string | null> | null;
  extFieldsOrder: string[] | null;
  headerIsFastCodes: boolean;
  decodeHeaderClass?: string;
  decodedHeader?: Record<string, string | null>;
  decodedHeaderError?: unknown;
  encodeHex: string;
  wireHex: string;
  wireSameAsEncode: boolean;
  wireExtFieldsOrder?: string[];
  decoded: VectorDecodedCommand | 'error';
  decodedFromEncodeHex?: VectorDecodedCommand | 'error';
}

export interface DecodeCase {
  kind: 'decode';
  id: string;
  description: string;
  inputHex: string;
  decoded: VectorDecodedCommand | 'error';
  error?: { class: string; message: string };
  reencodeHex?: string;
  reencodeError?: unknown;
}

export interface HeaderDecodeCase {
  kind: 'headerDecode';
  id: string;
  description: string;
  headerClass: string;
  extFields: Record<string, string | null> | null;
  decodedHeader?: Record<string, string | null>;
  error?: unknown;
}

export interface BodyCase {
  kind: 'body';
  id: string;
  description: string;
  class: string;
  json: string;
  standardJson: string;
}

export type RemotingCase = FrameCase | DecodeCase | HeaderDecodeCase | BodyCase;

export interface RemotingVectors {
  constants: {
    mqVersionCurrent: { ordinal: number };
    languageCodes: Record<string, number>;
    serializeTypes: Record<string, number>;
    requestCodes: Record<string, number>;
  };
  cases: RemotingCase[];
}

export function remotingVectors(): RemotingVectors {
  return JSON.parse(readFileSync(vectorPath('remoting-sample.json'), 'utf8')) as RemotingVectors;
}

export const hex = (s: string | null | undefined): Buffer | null => (s ? Buffer.from(s, 'hex') : null);

/** The extFields of a case as a Map in the order Java's HashMap iterated them. */
export function orderedExtFields(
  ext: Record<string, string | null> | null,
  order: string[] | null | undefined,
): Map<string, string | null> | null {
  if (ext === null) return null;
  const m = new Map<string, string | null>();
  for (const k of order ?? Object.keys(ext)) if (k in ext) m.set(k, ext[k] ?? null);
  for (const k of Object.keys(ext)) if (!m.has(k)) m.set(k, ext[k] ?? null);
  return m;
}
