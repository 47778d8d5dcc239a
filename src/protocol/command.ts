/**
 * The command model: every call is a request code, a typed header and an optional
 * binary body; every answer is a response code, a typed header, a remark and an optional body.
 * Transports (HTTP today, RocketMQ's TCP remoting later) carry these objects; nothing above the
 * transport sees bytes of the framing.
 * @pure
 */
export interface RemotingRequest<H = Record<string, unknown>> {
  code: number;
  header: H;
  body?: Buffer | undefined;
  /**
   * The client built the header itself from values it had already checked (a pull's header): the
   * transport sends it without checking it against the command's schema again. The broker still checks
   * every header it receives.
   */
  headerChecked?: boolean | undefined;
}

export interface RemotingResponse<H = Record<string, unknown>> {
  code: number;
  remark?: string | undefined;
  header: H;
  body?: Buffer | undefined;
}

export function response<H>(code: number, header: H, remark?: string, body?: Buffer): RemotingResponse<H> {
  return { code, header, remark, body };
}
