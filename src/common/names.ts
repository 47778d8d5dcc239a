/**
 * Topic and group name rules (RocketMQ's TopicValidator): the characters `%|a-zA-Z0-9_-`, a topic of at
 * most 127 chars, a group of at most 255. The store builds file paths from topic names, so these rules
 * are also what keeps every path inside the store directory (no `/`, `.`, `\` or NUL can pass).
 * @pure
 */

/** RocketMQ: TopicValidator.VALID_PATTERN_STR `^[%|a-zA-Z0-9_-]+$`. */
const VALID_NAME = /^[%|a-zA-Z0-9_-]+$/;

/** RocketMQ: TopicValidator.TOPIC_MAX_LENGTH. */
export const TOPIC_MAX_LENGTH = 127;
/** RocketMQ: Validators.CHARACTER_MAX_LENGTH (group names). */
export const GROUP_MAX_LENGTH = 255;

/**
 * Why a name is invalid, or `null` when it is valid: the TopicValidator characters and a length bound.
 * The store uses it with a bound of 255 for topics it writes (a retry topic `%RETRY%<group>` may pass
 * 127 chars, which RocketMQ stores with the V2 record layout; 255 is the file-name limit).
 */
export function nameProblem(kind: string, name: unknown, maxLength: number): string | null {
  if (typeof name !== 'string' || name.length === 0) return `the ${kind} name is empty`;
  if (name.length > maxLength) return `the ${kind} name is longer than ${maxLength} characters`;
  if (!VALID_NAME.test(name)) return `the ${kind} name '${name}' contains characters other than %|a-zA-Z0-9_-`;
  return null;
}

/** `null` when `topic` is a valid topic name, otherwise a sentence saying why not. */
export function topicNameProblem(topic: unknown): string | null {
  return nameProblem('topic', topic, TOPIC_MAX_LENGTH);
}

/** `null` when `group` is a valid consumer/producer group name, otherwise a sentence saying why not. */
export function groupNameProblem(group: unknown): string | null {
  return nameProblem('group', group, GROUP_MAX_LENGTH);
}

export const isValidTopicName = (topic: unknown): topic is string => topicNameProblem(topic) === null;
export const isValidGroupName = (group: unknown): group is string => groupNameProblem(group) === null;
