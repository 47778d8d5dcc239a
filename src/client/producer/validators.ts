/**
 * RocketMQ's Validators for what a producer sends, and the properties a Message turns into. Errors
 * are InvalidArgumentErrors naming the field (`message.topic`, `message.body`, ...).
 * @pure
 */
import { InvalidArgumentError } from '../../common/errors.js';
import { MessageConst, SCHEDULE_TOPIC, type Message } from '../../common/message.js';
import { topicNameProblem } from '../../common/names.js';

/** The properties-string separators (name 0x01 value 0x02) may not appear in names or values. */
const SEPARATORS = { test: (s: string): boolean => s.includes('\u0001') || s.includes('\u0002') };

/** RocketMQ: Validators.checkTopic and isNotAllowedSendTopic (the template and schedule topics). */
export function checkTopic(topic: unknown, field: string, createTopicKey: string): asserts topic is string {
  const problem = topicNameProblem(topic);
  if (problem) throw new InvalidArgumentError(field, problem);
  if (topic === createTopicKey || topic === SCHEDULE_TOPIC)
    throw new InvalidArgumentError(field, `the topic ${String(topic)} is a system topic; sending to it is not allowed`);
}

/** RocketMQ: Validators.checkMessage — topic, body present and non-empty, body size limit, and the optional fields. */
export function checkMessage(
  msg: Message,
  maxMessageSizeBytes: number,
  createTopicKey: string,
  field = 'message',
  maxDelayLevel = Number.MAX_SAFE_INTEGER,
): void {
  if (msg === null || typeof msg !== 'object') throw new InvalidArgumentError(field, 'the message is null');
  checkTopic(msg.topic, `${field}.topic`, createTopicKey);
  const body: unknown = msg.body;
  if (!(body instanceof Uint8Array))
    throw new InvalidArgumentError(`${field}.body`, 'the message body must be a Buffer');
  if (body.length === 0) throw new InvalidArgumentError(`${field}.body`, 'the message body length is zero');
  if (body.length > maxMessageSizeBytes)
    throw new InvalidArgumentError(
      `${field}.body`,
      `the message body size over max value, MAX: ${maxMessageSizeBytes}, got ${body.length}`,
    );
  if (msg.flag !== undefined && (!Number.isInteger(msg.flag) || msg.flag < -2147483648 || msg.flag > 2147483647))
    throw new InvalidArgumentError(`${field}.flag`, 'must be a 32-bit integer');
  if (msg.tags !== undefined && (typeof msg.tags !== 'string' || SEPARATORS.test(msg.tags)))
    throw new InvalidArgumentError(`${field}.tags`, 'must be a string without \\u0001 or \\u0002');
  if (msg.keys !== undefined) {
    const keys = Array.isArray(msg.keys) ? msg.keys : [msg.keys];
    for (const k of keys)
      if (typeof k !== 'string' || SEPARATORS.test(k))
        throw new InvalidArgumentError(`${field}.keys`, 'must be strings without \\u0001 or \\u0002');
  }
  if (
    msg.delayTimeLevel !== undefined &&
    (!Number.isInteger(msg.delayTimeLevel) || msg.delayTimeLevel < 0 || msg.delayTimeLevel > maxDelayLevel)
  )
    throw new InvalidArgumentError(
      `${field}.delayTimeLevel`,
      `must be an integer within [0, ${maxDelayLevel}] (a 1-based delay level; 0 = none), got ${String(msg.delayTimeLevel)}`,
    );
  if (msg.properties !== undefined) {
    if (msg.properties === null || typeof msg.properties !== 'object')
      throw new InvalidArgumentError(`${field}.properties`, 'must be an object of strings');
    for (const [k, v] of Object.entries(msg.properties)) {
      if (k === '' || SEPARATORS.test(k))
        throw new InvalidArgumentError(
          `${field}.properties`,
          `property name ${JSON.stringify(k)} is empty or holds \\u0001/\\u0002`,
        );
      if (typeof v !== 'string' || SEPARATORS.test(v))
        throw new InvalidArgumentError(`${field}.properties.${k}`, 'must be a string without \\u0001 or \\u0002');
    }
  }
}

/**
 * The properties a Message is sent with: the user's, then KEYS (space-joined), TAGS, DELAY and WAIT
 * (`true`, as RocketMQ's Message constructor sets it). The explicit fields win over same-named user
 * properties. UNIQ_KEY is added by the producer.
 */
export function messageToProperties(msg: Message): Map<string, string> {
  const props = new Map<string, string>();
  if (msg.properties) for (const [k, v] of Object.entries(msg.properties)) props.set(k, v);
  if (msg.keys !== undefined) {
    const keys = Array.isArray(msg.keys) ? msg.keys.join(MessageConst.KEY_SEPARATOR) : msg.keys;
    if (keys !== '') props.set(MessageConst.KEYS, keys);
  }
  if (msg.tags !== undefined && msg.tags !== '') props.set(MessageConst.TAGS, msg.tags);
  if (msg.delayTimeLevel !== undefined && msg.delayTimeLevel > 0)
    props.set(MessageConst.DELAY, String(msg.delayTimeLevel));
  if (!props.has(MessageConst.WAIT)) props.set(MessageConst.WAIT, 'true');
  return props;
}
