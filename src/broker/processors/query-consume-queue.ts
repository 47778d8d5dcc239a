/**
 * QUERY_CONSUME_QUEUE (321, mqadmin queryCq): up to `count` consume-queue units of a queue from `index`,
 * as RocketMQ's QueryConsumeQueueResponseBody: `queueData` (physicOffset, physicSize, tagsCode), the
 * queue's `minQueueIndex` / `maxQueueIndex`, and with `consumerGroup` the group's subscription (or
 * `filterData` `<group>@<topic> is not online!`). SYSTEM_ERROR `<queueId>@<topic> is not exist!` for a
 * queue the store does not have; an index past the queue is SUCCESS with the remark
 * `Index <i> of <queueId>@<topic> is not exist!` and no body, as RocketMQ answers.
 */
import { ResponseCode, toFastJson, type QueryConsumeQueueRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const queryConsumeQueue: Processor = (ctx, request) => {
  const h = request.header as QueryConsumeQueueRequestHeader;
  const read = ctx.store.getConsumeQueueUnits(h.topic, h.queueId, h.index, h.count);
  if (!read) return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, `${h.queueId}@${h.topic} is not exist!`));
  const body: Record<string, unknown> = { maxQueueIndex: read.max, minQueueIndex: read.min };
  if (h.consumerGroup !== undefined) {
    const sub = ctx.consumerManager.getConsumerGroupInfo(h.consumerGroup)?.findSubscriptionData(h.topic);
    if (sub) {
      body.subscriptionData = sub;
      const filter = ctx.consumerFilterManager.get(h.topic, h.consumerGroup);
      body.filterData = filter
        ? JSON.stringify(
            {
              bornTime: filter.bornTime,
              clientVersion: filter.clientVersion,
              consumerGroup: filter.consumerGroup,
              expression: filter.expression,
              expressionType: filter.expressionType,
              topic: filter.topic,
            },
            null,
            '\t',
          )
        : 'null';
    } else {
      body.filterData = `${h.consumerGroup}@${h.topic} is not online!`;
    }
  }
  if (read.units.length === 0) {
    return Promise.resolve(ok({}, `Index ${h.index} of ${h.queueId}@${h.topic} is not exist!`));
  }
  body.queueData = read.units.map((u) => ({ physicOffset: u.offsetPy, physicSize: u.size, tagsCode: u.tagsCode }));
  return Promise.resolve(ok({}, undefined, Buffer.from(toFastJson(body), 'utf8')));
};
