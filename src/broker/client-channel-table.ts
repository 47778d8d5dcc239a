/**
 * What the broker knows of each client from its heartbeats' remoting headers: the language and
 * version the client announced and the address its heartbeat came from (RocketMQ: ClientChannelInfo).
 * mqadmin's consumerConnection and producerConnection print them, and GET_CONSUMER_RUNNING_INFO is
 * refused for a client older than RocketMQ's V3_1_8_SNAPSHOT. Clients of the HTTP transport announce
 * neither and are shown as language OTHER, version 0.
 * @pure
 */

/** One client's announced identity. */
export interface ClientChannelInfo {
  language: string;
  version: number;
  remoteAddress: string;
}

/** MQVersion.Version.V3_1_8_SNAPSHOT.ordinal(): the oldest client that answers GET_CONSUMER_RUNNING_INFO. */
export const V3_1_8_SNAPSHOT = 62;

export class ClientChannelTable {
  private readonly clients = new Map<string, ClientChannelInfo>();

  /** Records (or refreshes) a client from a heartbeat. */
  record(clientId: string, info: ClientChannelInfo): void {
    this.clients.set(clientId, info);
  }

  get(clientId: string): ClientChannelInfo | undefined {
    return this.clients.get(clientId);
  }

  /** Forgets a client that has no connection left. */
  forget(clientId: string): void {
    this.clients.delete(clientId);
  }

  /** The language and version to show for a client: its own, or OTHER and 0 when it announced none. */
  describe(clientId: string): { language: string; version: number } {
    const c = this.clients.get(clientId);
    return c ? { language: c.language, version: c.version } : { language: 'OTHER', version: 0 };
  }
}
