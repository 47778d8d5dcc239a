/**
 * The stored-message format: one CommitLog record, which is also one element of a PULL_MESSAGE body
 * (records are concatenated with no extra framing). All integers are big-endian and signed.
 *
 * ```
 *  #  field                        width        offset (both hosts IPv4)
 *  1  TOTALSIZE                    int 4        0    whole record, this field included
 *  2  MAGICCODE                    int 4        4    0xDAA320A7 (V1) | 0xDAA320AB (V2)
 *  3  BODYCRC                      int 4        8    CRC32(body as stored) & 0x7FFFFFFF
 *  4  QUEUEID                      int 4        12
 *  5  FLAG                         int 4        16   producer's Message.flag
 *  6  QUEUEOFFSET                  long 8       20   consume-queue logical offset
 *  7  PHYSICALOFFSET               long 8       28   commit-log byte offset of this record
 *  8  SYSFLAG                      int 4        36   MessageSysFlag bits (below)
 *  9  BORNTIMESTAMP                long 8       40   producer time, ms
 * 10  BORNHOST                     4|16 + 4     48   address bytes + port (16 bytes when SYSFLAG & 0x10)
 * 11  STORETIMESTAMP               long 8       56   broker time at append, ms (68 with an IPv6 born host)
 * 12  STOREHOST                    4|16 + 4     64   address bytes + port (16 bytes when SYSFLAG & 0x20)
 * 13  RECONSUMETIMES               int 4        72
 * 14  PREPARED_TRANSACTION_OFFSET  long 8       76
 * 15  BODYLENGTH + BODY            int 4 + n    84   body as stored (compressed when SYSFLAG & 0x1)
 * 16  TOPICLENGTH + TOPIC          1|2 + n           V1: signed byte, V2: signed short; UTF-8
 * 17  PROPERTIESLENGTH + PROPS     short 2 + n       name 0x01 value 0x02 ..., UTF-8
 * ```
 *
 * TOTALSIZE = 84 (+12 per IPv6 host) + 4 + body + (1|2) + topic + 2 + properties.
 *
 * End-of-file filler (never returned by a pull): `[int remaining bytes][int 0xCBD43194]`.
 *
 * Producer batch body (SEND_BATCH_MESSAGE), one element per message:
 * `[int TOTALSIZE][int MAGIC = 0][int BODYCRC = 0][int FLAG][int BODYLENGTH + BODY][short PROPSLENGTH + PROPS]`.
 *
 * RocketMQ: MessageDecoder.java, MessageExtEncoder.java, MessageSysFlag.java, CommitLog.java.
 * @pure
 */

/** Magic code of a V1 record (1-byte topic length): RocketMQ's MESSAGE_MAGIC_CODE, -626843481. */
export const MAGIC_CODE_V1 = 0xdaa320a7 | 0;
/** Magic code of a V2 record (2-byte topic length): MESSAGE_MAGIC_CODE_V2, -626843477. */
export const MAGIC_CODE_V2 = 0xdaa320ab | 0;
/** Magic code of the end-of-file filler: BLANK_MAGIC_CODE, -875286124. */
export const BLANK_MAGIC_CODE = 0xcbd43194 | 0;
/** Length of the end-of-file filler record (`[int size][int BLANK_MAGIC_CODE]`). */
export const BLANK_RECORD_LENGTH = 8;

/** MessageSysFlag bits. */
export const MessageSysFlag = Object.freeze({
  COMPRESSED_FLAG: 0x1,
  MULTI_TAGS_FLAG: 0x2,
  /** Mask of the transaction type: NOT_TYPE 0x0, PREPARED 0x4, COMMIT 0x8, ROLLBACK 0xC. */
  TRANSACTION_MASK: 0xc,
  TRANSACTION_NOT_TYPE: 0x0,
  TRANSACTION_PREPARED_TYPE: 0x4,
  TRANSACTION_COMMIT_TYPE: 0x8,
  TRANSACTION_ROLLBACK_TYPE: 0xc,
  BORNHOST_V6_FLAG: 0x10,
  STOREHOSTADDRESS_V6_FLAG: 0x20,
  NEED_UNWRAP_FLAG: 0x40,
  INNER_BATCH_FLAG: 0x80,
  /** Bits 8-10: the compression type, `(sysFlag & 0x700) >> 8`. */
  COMPRESSION_TYPE_MASK: 0x700,
});

/** Compression types stored in sysFlag bits 8-10 (RocketMQ's CompressionType). 0 with COMPRESSED set is ZLIB. */
export const CompressionType = Object.freeze({ LZ4: 1, ZSTD: 2, ZLIB: 3 });
export type CompressionTypeValue = (typeof CompressionType)[keyof typeof CompressionType];

/** Field positions that do not depend on host address lengths. */
export const POS_TOTAL_SIZE = 0;
export const POS_MAGIC_CODE = 4;
export const POS_BODY_CRC = 8;
export const POS_QUEUE_ID = 12;
export const POS_FLAG = 16;
export const POS_QUEUE_OFFSET = 20;
export const POS_PHYSICAL_OFFSET = 28;
export const POS_SYSFLAG = 36;
export const POS_BORN_TIMESTAMP = 40;
export const POS_BORN_HOST = 48;

/** Bytes before the body length with both hosts IPv4. */
export const FIXED_PART_V4 = 84;
/** Extra bytes of one IPv6 host compared with IPv4. */
export const V6_EXTRA = 12;
/** Smallest possible record: fixed part + body length + 1-byte topic length + properties length. */
export const MIN_RECORD_LENGTH = FIXED_PART_V4 + 4 + 1 + 2;

/** Largest topic length in bytes per version, and largest properties length (signed short). */
export const MAX_TOPIC_BYTES_V1 = 127;
export const MAX_TOPIC_BYTES_V2 = 32767;
export const MAX_PROPERTIES_BYTES = 32767;

/** Property separators (MessageDecoder.NAME_VALUE_SEPARATOR / PROPERTY_SEPARATOR). */
export const NAME_VALUE_SEPARATOR = '\u0001';
export const PROPERTY_SEPARATOR = '\u0002';

/** Default cap on a decompressed body (decompression-bomb guard), bytes. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

/** Position of STORETIMESTAMP for a given sysFlag. */
export const storeTimestampPosition = (sysFlag: number): number =>
  POS_BORN_HOST + ((sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) === 0 ? 8 : 20);

/** Position of BODYLENGTH for a given sysFlag (RocketMQ: bodySizePosition). */
export const bodySizePosition = (sysFlag: number): number =>
  FIXED_PART_V4 +
  ((sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) === 0 ? 0 : V6_EXTRA) +
  ((sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) === 0 ? 0 : V6_EXTRA);

/**
 * The record length RocketMQ recomputes for a record (MessageExtEncoder.calMsgLength); readers reject a
 * record whose TOTALSIZE differs. `version` is 1 or 2.
 */
export function storedRecordLength(
  version: 1 | 2,
  sysFlag: number,
  bodyLength: number,
  topicLength: number,
  propertiesLength: number,
): number {
  return (
    bodySizePosition(sysFlag) + 4 + Math.max(bodyLength, 0) + version + topicLength + 2 + Math.max(propertiesLength, 0)
  );
}

/** The compression type of a sysFlag (MessageSysFlag.getCompressionType): 0 means ZLIB. */
export function compressionTypeOf(sysFlag: number): number {
  const t = (sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK) >> 8;
  return t === 0 ? CompressionType.ZLIB : t;
}
