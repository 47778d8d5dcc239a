/**
 * The plain-ACL administration RocketMQ 4.9.8's `mqadmin` sends a broker (RocketMQ: AdminBrokerProcessor,
 * with the headers CreateAccessConfigRequestHeader, DeleteAccessConfigRequestHeader,
 * UpdateGlobalWhiteAddrsConfigRequestHeader and GetBrokerAclConfigResponseHeader). Lists are comma-joined.
 *
 * - UPDATE_AND_CREATE_ACL_CONFIG (50) `accessKey`, `secretKey`, `whiteRemoteAddress`, `admin`,
 *   `defaultTopicPerm`, `defaultGroupPerm`, `topicPerms`, `groupPerms`.
 * - DELETE_ACL_CONFIG (51) `accessKey`.
 * - GET_BROKER_CLUSTER_ACL_INFO (52) → response header `version` (the file's DataVersion as JSON),
 *   `allAclFileVersion` (file path → DataVersion, JSON), `brokerName`, `brokerAddr`, `clusterName`.
 * - UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (53) `globalWhiteAddrs`, `aclFileFullPath`.
 * @pure
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, str, type CommandSpec } from '../define.js';

export const CreateAccessConfigRequestHeader = z.object({
  accessKey: str().min(1),
  secretKey: str().optional(),
  whiteRemoteAddress: str().optional(),
  admin: z.boolean().default(false),
  defaultTopicPerm: str().optional(),
  defaultGroupPerm: str().optional(),
  /** `topicA=PUB,topicB=SUB|PUB` */
  topicPerms: str().optional(),
  groupPerms: str().optional(),
});
export type CreateAccessConfigRequestHeader = z.infer<typeof CreateAccessConfigRequestHeader>;

export const DeleteAccessConfigRequestHeader = z.object({ accessKey: str().min(1) });
export type DeleteAccessConfigRequestHeader = z.infer<typeof DeleteAccessConfigRequestHeader>;

export const UpdateGlobalWhiteAddrsConfigRequestHeader = z.object({
  globalWhiteAddrs: str(),
  /** The file to change; blank: the broker's one. */
  aclFileFullPath: str().optional(),
});
export type UpdateGlobalWhiteAddrsConfigRequestHeader = z.infer<typeof UpdateGlobalWhiteAddrsConfigRequestHeader>;

export const GetBrokerAclConfigResponseHeader = z.object({
  version: str(),
  allAclFileVersion: str().optional(),
  brokerName: str(),
  brokerAddr: str(),
  clusterName: str(),
});
export type GetBrokerAclConfigResponseHeader = z.infer<typeof GetBrokerAclConfigResponseHeader>;

export const UpdateAndCreateAclConfig = defineCommand({
  code: RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
  name: 'UPDATE_AND_CREATE_ACL_CONFIG',
  requestHeader: CreateAccessConfigRequestHeader,
  responseHeader: EmptyHeader,
});
export const DeleteAclConfig = defineCommand({
  code: RequestCode.DELETE_ACL_CONFIG,
  name: 'DELETE_ACL_CONFIG',
  requestHeader: DeleteAccessConfigRequestHeader,
  responseHeader: EmptyHeader,
});
export const GetBrokerClusterAclInfo = defineCommand({
  code: RequestCode.GET_BROKER_CLUSTER_ACL_INFO,
  name: 'GET_BROKER_CLUSTER_ACL_INFO',
  requestHeader: EmptyHeader,
  responseHeader: GetBrokerAclConfigResponseHeader,
});
export const UpdateGlobalWhiteAddrsConfig = defineCommand({
  code: RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
  name: 'UPDATE_GLOBAL_WHITE_ADDRS_CONFIG',
  requestHeader: UpdateGlobalWhiteAddrsConfigRequestHeader,
  responseHeader: EmptyHeader,
});

/** Every command of this file, for the command table. */
export const ACL_CONFIG_COMMANDS: readonly CommandSpec[] = [
  UpdateAndCreateAclConfig,
  DeleteAclConfig,
  GetBrokerClusterAclInfo,
  UpdateGlobalWhiteAddrsConfig,
];
