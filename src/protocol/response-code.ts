/**
 * Response codes, with RocketMQ's numbers (RemotingSysResponseCode.java, ResponseCode.java).
 * Protocol outcomes travel as these codes inside an HTTP 200.
 * @pure
 */
export const ResponseCode = Object.freeze({
  SUCCESS: 0,
  SYSTEM_ERROR: 1,
  SYSTEM_BUSY: 2,
  REQUEST_CODE_NOT_SUPPORTED: 3,
  TRANSACTION_FAILED: 4,
  FLUSH_DISK_TIMEOUT: 10,
  SLAVE_NOT_AVAILABLE: 11,
  FLUSH_SLAVE_TIMEOUT: 12,
  MESSAGE_ILLEGAL: 13,
  SERVICE_NOT_AVAILABLE: 14,
  VERSION_NOT_SUPPORTED: 15,
  NO_PERMISSION: 16,
  TOPIC_NOT_EXIST: 17,
  TOPIC_EXIST_ALREADY: 18,
  PULL_NOT_FOUND: 19,
  PULL_RETRY_IMMEDIATELY: 20,
  PULL_OFFSET_MOVED: 21,
  QUERY_NOT_FOUND: 22,
  SUBSCRIPTION_PARSE_FAILED: 23,
  SUBSCRIPTION_NOT_EXIST: 24,
  SUBSCRIPTION_NOT_LATEST: 25,
  SUBSCRIPTION_GROUP_NOT_EXIST: 26,
  FILTER_DATA_NOT_EXIST: 27,
  FILTER_DATA_NOT_LATEST: 28,
  INVALID_PARAMETER: 29,
  CONSUMER_NOT_ONLINE: 206,
  CONSUME_MSG_TIMEOUT: 207,
  NO_MESSAGE: 208,
  POLLING_TIMEOUT: 210,
  FLOW_CONTROL: 215,
  NOT_LEADER_FOR_QUEUE: 501,
  ILLEGAL_OPERATION: 604,
  GO_AWAY: 1500,
} as const);

export type ResponseCodeName = keyof typeof ResponseCode;

const NAMES = new Map<number, ResponseCodeName>(
  Object.entries(ResponseCode).map(([k, v]) => [v, k as ResponseCodeName] as const),
);

export function responseCodeName(code: number): string {
  return NAMES.get(code) ?? `RESPONSE_CODE_${code}`;
}

/** RocketMQ's FAQ suffix appended to some remarks (FAQUrl.suggestTodo). */
export const FAQ_SUFFIX = '\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details.';
