/**
 * ClientRemotingProcessor (RocketMQ's name): the requests a RocketMQ broker sends to a client over
 * the client's own TCP connection.
 *
 * | code | request | answer |
 * |---|---|---|
 * | NOTIFY_CONSUMER_IDS_CHANGED (40) | oneway, `consumerGroup`: a member joined or left | none; the RebalanceService runs at once |
 * | GET_CONSUMER_RUNNING_INFO (307) | `consumerGroup`, `clientId`, `jstackEnable` | ConsumerRunningInfo JSON, or SYSTEM_ERROR when the group is not here |
 * | CHECK_TRANSACTION_STATE (39) | oneway, the half message's offsets; body: the message | none; the producer answers with END_TRANSACTION |
 * | CONSUME_MESSAGE_DIRECTLY (309) | `consumerGroup`, `clientId`, `msgId`, `brokerName`; body: one stored message | ConsumeMessageDirectlyResult JSON |
 * | RESET_CONSUMER_CLIENT_OFFSET (220) | oneway, `topic`, `group`, `timestamp`, `isForce`; body: ResetOffsetBody | none; the group's consumer moves its queues there at once |
 * | GET_CONSUMER_STATUS_FROM_CLIENT (221) | `topic`, `group` | GetConsumerStatusBody: the offsets the group's consumer holds in memory for the topic (none for a consumer without running info, as RocketMQ answers for one that is not a push or pull consumer) |
 *
 * Other codes are answered REQUEST_CODE_NOT_SUPPORTED by the transport.
 * @pure
 */
import { decodeMessages } from '../../common/codec/index.js';
import type { Logger } from '../../common/logger.js';
import type { MessageQueue } from '../../common/message.js';
import { FastJsonMap, parseFastJson, toFastJson } from '../../protocol/admin-body-json.js';
import type { RemotingRequest, RemotingResponse } from '../../protocol/command.js';
import { RequestCode } from '../../protocol/request-code.js';
import { ResponseCode } from '../../protocol/response-code.js';
import { encodeConsumeMessageDirectlyResult, encodeConsumerRunningInfo } from './consumer-running-info.js';
import type { MQConsumerInner, MQProducerInner } from './mq-consumer-inner.js';
import { checkTransactionState } from './transaction-check.js';

export interface ClientRemotingProcessorDeps {
  selectConsumer(group: string): MQConsumerInner | undefined;
  selectProducer?(group: string): MQProducerInner | undefined;
  rebalanceImmediately(): void;
  logger: Logger;
}

/** The codes this processor serves. */
export const CLIENT_REQUEST_CODES: readonly number[] = Object.freeze([
  RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
  RequestCode.GET_CONSUMER_RUNNING_INFO,
  RequestCode.CONSUME_MESSAGE_DIRECTLY,
  RequestCode.CHECK_TRANSACTION_STATE,
  RequestCode.RESET_CONSUMER_CLIENT_OFFSET,
  RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT,
]);

const headerString = (request: RemotingRequest, key: string): string | undefined => {
  const v = (request.header as Record<string, unknown>)[key];
  return v === undefined || v === null ? undefined : String(v);
};

const systemError = (remark: string): RemotingResponse => ({ code: ResponseCode.SYSTEM_ERROR, header: {}, remark });

export class ClientRemotingProcessor {
  readonly #deps: ClientRemotingProcessorDeps;

  constructor(deps: ClientRemotingProcessorDeps) {
    this.#deps = deps;
  }

  /** Serves one broker request; `undefined` means no answer (oneway). Never throws. */
  async processRequest(request: RemotingRequest, addr: string): Promise<RemotingResponse | undefined> {
    try {
      switch (request.code) {
        case RequestCode.NOTIFY_CONSUMER_IDS_CHANGED:
          // RocketMQ: notifyConsumerIdsChanged — rebalance now, no answer.
          this.#deps.logger.debug(
            { addr, group: headerString(request, 'consumerGroup') },
            'broker says the group membership changed',
          );
          this.#deps.rebalanceImmediately();
          return undefined;
        case RequestCode.GET_CONSUMER_RUNNING_INFO:
          return this.#runningInfo(request);
        case RequestCode.CHECK_TRANSACTION_STATE:
          return checkTransactionState(request, addr, this.#deps);
        case RequestCode.CONSUME_MESSAGE_DIRECTLY:
          return await this.#consumeDirectly(request);
        case RequestCode.RESET_CONSUMER_CLIENT_OFFSET:
          await this.#resetOffset(request, addr);
          return undefined;
        case RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT:
          return this.#consumerStatus(request);
        default:
          return {
            code: ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
            header: {},
            remark: ` request type ${request.code} not supported`,
          };
      }
    } catch (err) {
      this.#deps.logger.warn({ err, addr, code: request.code }, 'serving a broker request failed');
      return systemError(err instanceof Error ? err.message : String(err));
    }
  }

  #runningInfo(request: RemotingRequest): RemotingResponse {
    const group = headerString(request, 'consumerGroup') ?? '';
    const consumer = this.#deps.selectConsumer(group);
    const info = consumer?.runningInfo?.();
    if (!info) return systemError(`The Consumer Group <${group}> not exist in this consumer`);
    return { code: ResponseCode.SUCCESS, header: {}, body: Buffer.from(encodeConsumerRunningInfo(info), 'utf8') };
  }

  /** RocketMQ: ClientRemotingProcessor.getConsumeStatus — the offsets the group's consumer holds for the topic. */
  #consumerStatus(request: RemotingRequest): RemotingResponse {
    const topic = headerString(request, 'topic') ?? '';
    const info = this.#deps.selectConsumer(headerString(request, 'group') ?? '')?.runningInfo?.();
    const offsets = (info?.mqTable ?? [])
      .filter(([mq]) => mq.topic === topic)
      .map(([mq, pq]): [MessageQueue, number] => [
        { brokerName: mq.brokerName, queueId: mq.queueId, topic: mq.topic },
        pq.commitOffset,
      ]);
    const body = toFastJson({ messageQueueTable: new FastJsonMap(offsets) });
    return { code: ResponseCode.SUCCESS, header: {}, body: Buffer.from(body, 'utf8') };
  }

  /** RocketMQ: ClientRemotingProcessor.resetOffset — handed to the group's consumer, if it is here. */
  async #resetOffset(request: RemotingRequest, addr: string): Promise<void> {
    const group = headerString(request, 'group') ?? '';
    const topic = headerString(request, 'topic') ?? '';
    const consumer = this.#deps.selectConsumer(group);
    if (!consumer?.resetOffset) {
      this.#deps.logger.debug({ addr, group, topic }, 'offset reset for a group without a consumer that moves at once');
      return;
    }
    const table = resetOffsetTable(request.body, topic);
    this.#deps.logger.info({ addr, group, topic, queues: table.length }, 'the broker reset the group offsets');
    await consumer.resetOffset(topic, table);
  }

  async #consumeDirectly(request: RemotingRequest): Promise<RemotingResponse> {
    const group = headerString(request, 'consumerGroup') ?? '';
    const consumer = this.#deps.selectConsumer(group);
    if (!consumer?.consumeMessageDirectly)
      return systemError(`The Consumer Group <${group}> not exist in this consumer`);
    const [msg] = request.body ? decodeMessages(request.body) : [];
    if (!msg) return systemError('CONSUME_MESSAGE_DIRECTLY carried no message');
    const result = await consumer.consumeMessageDirectly(msg, headerString(request, 'brokerName'));
    return {
      code: ResponseCode.SUCCESS,
      header: {},
      body: Buffer.from(encodeConsumeMessageDirectlyResult(result), 'utf8'),
    };
  }
}

/** The MessageQueue → offset entries of a ResetOffsetBody for `topic`; entries of another shape are left out. */
function resetOffsetTable(body: Buffer | undefined, topic: string): Array<[MessageQueue, number]> {
  const root = body ? parseFastJson(body.toString('utf8')) : null;
  const table = (root as { offsetTable?: unknown } | null)?.offsetTable;
  if (!(table instanceof FastJsonMap)) throw new Error('RESET_CONSUMER_CLIENT_OFFSET carried no offsetTable');
  const out: Array<[MessageQueue, number]> = [];
  for (const [k, v] of table.entries) {
    const q = k as Partial<MessageQueue> | null;
    if (q?.topic !== topic || typeof q.brokerName !== 'string' || typeof q.queueId !== 'number') continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) continue;
    out.push([{ topic: q.topic, brokerName: q.brokerName, queueId: q.queueId }, v]);
  }
  return out;
}
