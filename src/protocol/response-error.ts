/**
 * The one mapping from a broker response code to an error. The error's `code` is
 * `ERR_` + the response code's RocketMQ name (e.g. `ERR_TOPIC_NOT_EXIST`), `responseCode` keeps the
 * number, and `retriable` says whether the same call may succeed later unchanged.
 * @pure
 */
import { RocketMQError } from '../common/errors.js';
import { ResponseCode, responseCodeName } from './response-code.js';

/** An error answered by the broker. */
export class BrokerResponseError extends RocketMQError {
  readonly remark: string | undefined;
  constructor(responseCode: number, remark: string | undefined, retriable: boolean) {
    const name = responseCodeName(responseCode);
    super(`ERR_${name}`, `broker answered ${name} (${responseCode})${remark ? `: ${remark}` : ''}`, {
      responseCode,
      retriable,
    });
    this.remark = remark;
  }
}

const RETRIABLE = new Set<number>([
  ResponseCode.SYSTEM_BUSY,
  ResponseCode.FLUSH_DISK_TIMEOUT,
  ResponseCode.SLAVE_NOT_AVAILABLE,
  ResponseCode.FLUSH_SLAVE_TIMEOUT,
  ResponseCode.SERVICE_NOT_AVAILABLE,
  ResponseCode.SUBSCRIPTION_NOT_EXIST,
  ResponseCode.SUBSCRIPTION_NOT_LATEST,
  ResponseCode.FILTER_DATA_NOT_EXIST,
  ResponseCode.FILTER_DATA_NOT_LATEST,
  ResponseCode.FLOW_CONTROL,
  ResponseCode.GO_AWAY,
  ResponseCode.SYSTEM_ERROR,
]);

/** The error for a response code that the caller treats as a failure. */
export function errorFromResponse(responseCode: number, remark?: string): BrokerResponseError {
  return new BrokerResponseError(responseCode, remark, RETRIABLE.has(responseCode));
}
