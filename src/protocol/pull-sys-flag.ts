/**
 * PullSysFlag bits (PullSysFlag.java) carried by PULL_MESSAGE's `sysFlag`.
 * @pure
 */
export const PullSysFlag = Object.freeze({
  /** The broker commits `commitOffset` before reading. */
  COMMIT_OFFSET: 0x1,
  /** The broker may hold the request (long polling). */
  SUSPEND: 0x2,
  /** The subscription travels in the header; otherwise the heartbeat's is used. */
  SUBSCRIPTION: 0x4,
  /** Legacy filter-server mode. */
  CLASS_FILTER: 0x8,
  /** Lite pull: the client sends LITE_PULL_MESSAGE instead of PULL_MESSAGE. */
  LITE_PULL_MESSAGE: 0x10,
} as const);

export function buildPullSysFlag(
  commitOffset: boolean,
  suspend: boolean,
  subscription: boolean,
  classFilter = false,
  litePull = false,
): number {
  return (
    (commitOffset ? PullSysFlag.COMMIT_OFFSET : 0) |
    (suspend ? PullSysFlag.SUSPEND : 0) |
    (subscription ? PullSysFlag.SUBSCRIPTION : 0) |
    (classFilter ? PullSysFlag.CLASS_FILTER : 0) |
    (litePull ? PullSysFlag.LITE_PULL_MESSAGE : 0)
  );
}

export const hasCommitOffsetFlag = (f: number): boolean => (f & PullSysFlag.COMMIT_OFFSET) !== 0;
export const hasSuspendFlag = (f: number): boolean => (f & PullSysFlag.SUSPEND) !== 0;
export const hasSubscriptionFlag = (f: number): boolean => (f & PullSysFlag.SUBSCRIPTION) !== 0;
export const hasClassFilterFlag = (f: number): boolean => (f & PullSysFlag.CLASS_FILTER) !== 0;
export const clearCommitOffsetFlag = (f: number): number => f & ~PullSysFlag.COMMIT_OFFSET;
