/**
 * One way to turn a failed zod validation of an options object into the error callers see: an
 * InvalidArgumentError whose `field` names the first bad option (or the unknown one). Also how values
 * parsed once or rarely are parsed (without zod's compiled fast path).
 * @pure
 */
import { z } from 'zod';
import { InvalidArgumentError } from './errors.js';

/**
 * Parse options for a value parsed once or rarely (options, answers to control calls): zod's compiled
 * fast path pays for itself only on a schema parsed many times, and compiling it on a client's first
 * calls was a few milliseconds of its start-up.
 */
export const ONE_SHOT = { jitless: true } as const;

/** Parses of one schema made without zod's compiled fast path, before it is compiled. */
export const COMPILE_AFTER_PARSES = 100;
const parses = new WeakMap<z.ZodType, number>();

/**
 * `schema.safeParse(value)` for a schema parsed an unknown number of times (the bodies of a broker's
 * control requests): its first COMPILE_AFTER_PARSES parses take zod's generic path, later ones the
 * compiled fast path. Compiling it costs milliseconds, which a fresh broker paid on its first client's
 * heartbeat, and pays for itself only over many parses.
 */
export function tieredSafeParse<S extends z.ZodType>(schema: S, value: unknown): z.ZodSafeParseResult<z.output<S>> {
  const n = parses.get(schema) ?? 0;
  if (n >= COMPILE_AFTER_PARSES) return schema.safeParse(value);
  parses.set(schema, n + 1);
  return schema.safeParse(value, ONE_SHOT);
}

/**
 * Validates `input` against `schema` with unknown keys refused (a misspelt option fails loudly instead
 * of silently keeping its default) and returns the parsed value, or throws InvalidArgumentError.
 */
export function parseStrictOptions<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const strict = schema instanceof z.ZodObject ? schema.strict() : schema;
  // `strict` is a schema made for this one parse: compiling zod's fast path for it would be pure cost.
  const result = strict.safeParse(input, ONE_SHOT);
  if (result.success) return result.data as z.output<S>;
  const issue = mostSpecific(result.error.issues[0]);
  if (issue?.code === 'unrecognized_keys') {
    throw new InvalidArgumentError(String(issue.keys[0]), `unknown ${what} option`);
  }
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : 'options';
  throw new InvalidArgumentError(field, `${issue?.message ?? 'invalid'} (${what} option)`);
}

/**
 * A union's issue says only "Invalid input"; the branch that got past the type check (a string that is
 * not a URL, rather than "expected array") has the message that helps, so that one is reported, with
 * its path under the union's.
 */
function mostSpecific(issue: z.core.$ZodIssue | undefined): z.core.$ZodIssue | undefined {
  if (issue?.code !== 'invalid_union') return issue;
  const branch = issue.errors.find((b) => b.length > 0 && b[0]?.code !== 'invalid_type') ?? issue.errors[0];
  const inner = branch?.[0];
  if (!inner) return issue;
  return mostSpecific({ ...inner, path: [...issue.path, ...inner.path] } as z.core.$ZodIssue);
}
