/**
 * A command's specification: its request code, the zod schemas of its request header and response
 * header, and, for commands whose body is JSON (heartbeat, route, consumer list), the schema of that
 * body. Client and broker validate with the same schemas: one source of truth.
 * @pure
 */
import { z } from 'zod';

export interface CommandSpec<
  Req extends z.ZodType = z.ZodType,
  Res extends z.ZodType = z.ZodType,
  ReqBody extends z.ZodType | undefined = z.ZodType | undefined,
  ResBody extends z.ZodType | undefined = z.ZodType | undefined,
> {
  code: number;
  name: string;
  requestHeader: Req;
  responseHeader: Res;
  /** Present when the request body is JSON of this shape (otherwise raw bytes or none). */
  requestBody?: ReqBody;
  /** Present when the response body is JSON of this shape. */
  responseBody?: ResBody;
}

export function defineCommand<
  Req extends z.ZodType,
  Res extends z.ZodType,
  ReqBody extends z.ZodType | undefined = undefined,
  ResBody extends z.ZodType | undefined = undefined,
>(spec: CommandSpec<Req, Res, ReqBody, ResBody>): CommandSpec<Req, Res, ReqBody, ResBody> {
  return Object.freeze(spec);
}

/** A 32-bit signed int (Java int). */
export const int32 = (): z.ZodInt => z.int().min(-2147483648).max(2147483647);
/** A Java long that fits a JS number exactly (|v| <= 2^53 - 1); larger values are refused, never rounded. */
export const long = (): z.ZodInt => z.int();
export const str = (): z.ZodString => z.string();

/** The empty header. */
export const EmptyHeader = z.object({});
export type EmptyHeader = z.infer<typeof EmptyHeader>;

/** Formats a zod error as `field: problem` for the first issue (used in HTTP 400 answers and client errors). */
export function describeZodError(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  if (!issue) return { field: '', message: 'invalid' };
  return { field: issue.path.map(String).join('.') || '(root)', message: issue.message };
}
