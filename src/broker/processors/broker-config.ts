/**
 * GET_BROKER_CONFIG (26), UPDATE_BROKER_CONFIG (25), GET_NAMESRV_CONFIG (319) and UPDATE_NAMESRV_CONFIG
 * (318), as RocketMQ's AdminBrokerProcessor and the NameServer's DefaultRequestProcessor answer them:
 * Properties text both ways. An update naming a key that cannot change on a running broker is refused NO_PERMISSION (RocketMQ's
 * answer for its config black list); an unknown key or a value of the wrong type is refused SYSTEM_ERROR;
 * both remarks name the key, and nothing of a refused update is applied (broker-config-table.ts).
 */
import { ResponseCode } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { parseProperties } from '../broker-config-table.js';
import { fail, ok } from './responses.js';

export const getBrokerConfig: Processor = (ctx) => {
  const table = ctx.ops.config;
  return Promise.resolve(ok({ version: table.dataVersionJson() }, undefined, Buffer.from(table.formatAll(), 'utf8')));
};

export const updateBrokerConfig: Processor = (ctx, request, connection) => {
  const body = request.body;
  // RocketMQ: no body is a successful update of nothing.
  if (!body || body.length === 0) return Promise.resolve(ok());
  const properties = parseProperties(body.toString('utf8'));
  const refused = ctx.ops.config.update(properties, ctx.clock.now());
  if (refused) {
    ctx.logger.warn({ key: refused.key, remote: connection.remoteAddress }, 'updateBrokerConfig refused');
    return Promise.resolve(
      fail(refused.blackListed ? ResponseCode.NO_PERMISSION : ResponseCode.SYSTEM_ERROR, refused.message),
    );
  }
  ctx.logger.info({ keys: [...properties.keys()], remote: connection.remoteAddress }, 'updateBrokerConfig');
  return Promise.resolve(ok());
};

/** The NameServer's settings this broker has in that role (RocketMQ: NamesrvConfig and its NettyServerConfig). */
export const getNamesrvConfig: Processor = (ctx) =>
  Promise.resolve(ok({}, undefined, Buffer.from(ctx.ops.nameServer.config.formatAll(), 'utf8')));

/**
 * UPDATE_NAMESRV_CONFIG (318): Properties text applied to the NameServer settings in memory, checked
 * whole as UPDATE_BROKER_CONFIG checks its keys (RocketMQ: DefaultRequestProcessor.updateConfig).
 */
export const updateNamesrvConfig: Processor = (ctx, request, connection) => {
  const body = request.body;
  if (!body || body.length === 0) return Promise.resolve(ok());
  const properties = parseProperties(body.toString('utf8'));
  const refused = ctx.ops.nameServer.config.update(properties);
  if (refused) {
    ctx.logger.warn({ key: refused.key, remote: connection.remoteAddress }, 'updateNamesrvConfig refused');
    return Promise.resolve(
      fail(refused.blackListed ? ResponseCode.NO_PERMISSION : ResponseCode.SYSTEM_ERROR, refused.message),
    );
  }
  ctx.logger.info({ keys: [...properties.keys()], remote: connection.remoteAddress }, 'updateNamesrvConfig');
  return Promise.resolve(ok());
};
