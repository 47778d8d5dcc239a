/**
 * The store's on-disk layout in one place: widths, file names and paths (docs/storage.md describes
 * each file). Path helpers only accept names already validated by src/common/names.ts.
 * @pure
 */

/** Consume-queue unit: commitLogOffset long 8, size int 4, tagsCode long 8 (RocketMQ: CQ_STORE_UNIT_SIZE). */
export const CQ_UNIT_SIZE = 20;
/** Width of a segment file name: the start offset, zero-padded (RocketMQ: UtilAll.offset2FileName). */
export const FILE_NAME_WIDTH = 20;
/** A consume-queue filler unit's size field (RocketMQ: pre-filled entries `(0, Integer.MAX_VALUE, 0)`). */
export const CQ_FILLER_SIZE = 0x7fffffff;
/** Blank filler written at a commit-log segment's end: `[int remaining][int BLANK_MAGIC]`. */
export const END_FILE_MIN_BLANK_LENGTH = 8;

export const COMMITLOG_DIR = 'commitlog';
export const CONSUMEQUEUE_DIR = 'consumequeue';
export const CHECKPOINT_FILE = 'checkpoint';
export const ABORT_FILE = 'abort';
export const LOCK_FILE = 'lock';

/** `00000000000000001024` for 1024. */
export function offsetToFileName(offset: number): string {
  return String(offset).padStart(FILE_NAME_WIDTH, '0');
}

/** The offset a segment file name stands for, or `null` when the name is not a segment name. */
export function fileNameToOffset(name: string): number | null {
  if (!/^\d{20}$/.test(name)) return null;
  const n = Number(name);
  return Number.isSafeInteger(n) ? n : null;
}

/** Start offset of the segment holding `offset` (RocketMQ: offset - offset % fileSize). */
export function segmentStart(offset: number, fileSize: number): number {
  return offset - (offset % fileSize);
}

/** First offset of the next segment (RocketMQ: MappedFileQueue/ConsumeQueue rollNextFile). */
export function rollNextFile(offset: number, fileSize: number): number {
  return offset + fileSize - (offset % fileSize);
}
