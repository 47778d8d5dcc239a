/**
 * The NameServer's KV config, as RocketMQ's DefaultRequestProcessor answers it (KVConfigManager:
 * namespace → key → value, kept in `config/kvConfig.json` and read back at start):
 * - PUT_KV_CONFIG (100): sets the value; SUCCESS once it is on disk.
 * - GET_KV_CONFIG (101): response header `value`; QUERY_NOT_FOUND
 *   `No config item, Namespace: <ns> Key: <key>` when absent.
 * - DELETE_KV_CONFIG (102): removes the key; SUCCESS whether or not it was there.
 * - GET_KVLIST_BY_NAMESPACE (219): body KVTable `{"table":{...}}`; QUERY_NOT_FOUND
 *   `No config item, Namespace: <ns>` for a namespace never written.
 * mqadmin's updateKvConfig / deleteKvConfig and updateOrderConf use them.
 */
import {
  ResponseCode,
  toFastJson,
  type GetKvListByNamespaceRequestHeader,
  type KvConfigRequestHeader,
  type PutKvConfigRequestHeader,
} from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const putKvConfig: Processor = async (ctx, request, connection) => {
  const h = request.header as PutKvConfigRequestHeader;
  ctx.logger.info({ namespace: h.namespace, key: h.key, remote: connection.remoteAddress }, 'putKVConfig');
  await ctx.ops.nameServer.kvConfig.put(h.namespace, h.key, h.value);
  return ok();
};

export const getKvConfig: Processor = (ctx, request) => {
  const h = request.header as KvConfigRequestHeader;
  const value = ctx.ops.nameServer.kvConfig.get(h.namespace, h.key);
  if (value === undefined) {
    return Promise.resolve(
      fail(ResponseCode.QUERY_NOT_FOUND, `No config item, Namespace: ${h.namespace} Key: ${h.key}`),
    );
  }
  return Promise.resolve(ok({ value }));
};

export const deleteKvConfig: Processor = async (ctx, request, connection) => {
  const h = request.header as KvConfigRequestHeader;
  ctx.logger.info({ namespace: h.namespace, key: h.key, remote: connection.remoteAddress }, 'deleteKVConfig');
  await ctx.ops.nameServer.kvConfig.delete(h.namespace, h.key);
  return ok();
};

export const getKvListByNamespace: Processor = (ctx, request) => {
  const h = request.header as GetKvListByNamespaceRequestHeader;
  const table = ctx.ops.nameServer.kvConfig.list(h.namespace);
  if (!table) return Promise.resolve(fail(ResponseCode.QUERY_NOT_FOUND, `No config item, Namespace: ${h.namespace}`));
  return Promise.resolve(ok({}, undefined, Buffer.from(toFastJson({ table }), 'utf8')));
};
