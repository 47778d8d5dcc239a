/**
 * Plain-ACL administration (RocketMQ: AdminBrokerProcessor's updateAndCreateAccessConfig,
 * deleteAccessConfig, getBrokerAclConfigVersion and updateGlobalWhiteAddrsConfig, over
 * PlainPermissionManager). Each change is written to the broker's ACL file and is in force for the next
 * request. The access check lets only admin accounts ask these.
 *
 * Where this differs from RocketMQ 4.9.8: its refusal of a bad value repeats the value, secretKey
 * included; here a remark names the field and never a secret. And without an ACL file RocketMQ fails
 * on a missing validator (a remark of "null", or no answer at all for the version query); here the
 * answer says that ACL is not enabled.
 */
import path from 'node:path';
import type {
  CreateAccessConfigRequestHeader,
  DeleteAccessConfigRequestHeader,
  UpdateGlobalWhiteAddrsConfigRequestHeader,
} from '../../protocol/index.js';
import { ResponseCode, type RemotingResponse } from '../../protocol/index.js';
import type { AclGuard } from '../acl/acl-guard.js';
import { AclChangeError } from '../acl/plain-acl-writer.js';
import type { BrokerContext, Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

/** RocketMQ 4.9.8's ResponseCode values for these commands (RocketMQ 5 reuses 210 for POLLING_TIMEOUT). */
export const AclResponseCode = Object.freeze({
  UPDATE_AND_CREATE_ACL_CONFIG_FAILED: 209,
  DELETE_ACL_CONFIG_FAILED: 210,
  UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED: 211,
});

export const ACL_NOT_ENABLED = 'ACL is not enabled on this broker (start it with an ACL file: aclFile / --acl-file)';

/** RocketMQ's UtilAll.split: undefined stays undefined, "" is one empty entry (which is then dropped). */
const splitList = (text: string | undefined): string[] | undefined =>
  text === undefined ? undefined : text.split(',').filter((s) => s.trim() !== '');

/** Runs a change, turning a refused value or a failed write into `code` with a remark that names no secret. */
function change(ctx: BrokerContext, code: number, failed: string, run: (acl: AclGuard) => boolean): RemotingResponse {
  const acl = ctx.ops.acl;
  if (!acl) return fail(code, ACL_NOT_ENABLED);
  try {
    if (run(acl)) return ok();
    ctx.logger.warn({}, failed);
    return fail(code, failed);
  } catch (e) {
    if (e instanceof AclChangeError) return fail(code, `${failed} ${e.message}`);
    const reason = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    ctx.logger.error({ aclFile: acl.file, error: reason }, 'ACL file not written');
    return fail(code, `${failed} The ACL file could not be written: ${reason}`);
  }
}

const KEY_MIN_LENGTH = 6;

export const updateAndCreateAclConfig: Processor = (ctx, request) => {
  const h = request.header as CreateAccessConfigRequestHeader;
  const failed = `The accesskey[${h.accessKey}] corresponding to accessConfig has been updated failed.`;
  const code = AclResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED;
  // RocketMQ: checkPlainAccessConfig, without repeating the secret.
  if (h.accessKey.length <= KEY_MIN_LENGTH || (h.secretKey ?? '').length <= KEY_MIN_LENGTH) {
    return Promise.resolve(
      fail(
        code,
        `${failed} The accessKey and secretKey cannot be null and length should longer than ${KEY_MIN_LENGTH}`,
      ),
    );
  }
  return Promise.resolve(
    change(ctx, code, failed, (acl) => {
      acl.updateAccount({
        accessKey: h.accessKey,
        secretKey: h.secretKey as string,
        whiteRemoteAddress: h.whiteRemoteAddress,
        admin: h.admin,
        defaultTopicPerm: h.defaultTopicPerm,
        defaultGroupPerm: h.defaultGroupPerm,
        topicPerms: splitList(h.topicPerms),
        groupPerms: splitList(h.groupPerms),
      });
      return true;
    }),
  );
};

export const deleteAclConfig: Processor = (ctx, request, connection) => {
  const { accessKey } = request.header as DeleteAccessConfigRequestHeader;
  ctx.logger.info({ remote: connection.remoteAddress }, 'DeleteAccessConfig called');
  const failed = `The accesskey[${accessKey}] corresponding to accessConfig has been deleted failed.`;
  return Promise.resolve(
    change(ctx, AclResponseCode.DELETE_ACL_CONFIG_FAILED, failed, (acl) => acl.deleteAccount(accessKey)),
  );
};

export const updateGlobalWhiteAddrsConfig: Processor = (ctx, request) => {
  const h = request.header as UpdateGlobalWhiteAddrsConfigRequestHeader;
  const failed = `The globalWhiteAddresses[${h.globalWhiteAddrs}] has been updated failed.`;
  return Promise.resolve(
    change(ctx, AclResponseCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED, failed, (acl) => {
      // This broker has one ACL file: a request naming another is refused, as RocketMQ refuses a missing one.
      const named = h.aclFileFullPath?.trim();
      if (named && path.resolve(named) !== path.resolve(acl.file)) return false;
      acl.updateGlobalWhiteAddrs(splitList(h.globalWhiteAddrs) ?? []);
      return true;
    }),
  );
};

export const getBrokerClusterAclInfo: Processor = (ctx) => {
  const acl = ctx.ops.acl;
  if (!acl) return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, ACL_NOT_ENABLED));
  const v = acl.dataVersion;
  // fastjson's DataVersion: its fields in name order.
  const version = JSON.stringify({ counter: v.counter, timestamp: v.timestamp });
  return Promise.resolve(
    ok({
      version,
      allAclFileVersion: `{${JSON.stringify(path.resolve(acl.file))}:${version}}`,
      brokerName: ctx.brokerName,
      brokerAddr: `${ctx.ops.config.get('brokerIP1') ?? ctx.brokerIP}:${ctx.ops.config.get('listenPort') ?? ''}`,
      clusterName: ctx.clusterName,
    }),
  );
};
