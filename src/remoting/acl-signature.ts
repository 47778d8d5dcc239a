/**
 * RocketMQ's plain-ACL request signature, one implementation for both sides: clients sign with it
 * (as `AclClientRPCHook` does) and the bundled broker checks the same bytes (as `PlainAccessValidator`
 * does). The signed content is the values of the request's custom header, sorted by field name,
 * followed by the body; the signature is HmacSHA1 of it under the secret key, Base64-encoded.
 */
import { createHmac } from 'node:crypto';
import { setOwn, type ExtFields } from './remoting-command-model.js';

/** The ext field that names the account. */
export const ACL_ACCESS_KEY = 'AccessKey';
/** The ext field that carries the signature. */
export const ACL_SIGNATURE = 'Signature';
/** The ext field that carries an STS security token. */
export const ACL_SECURITY_TOKEN = 'SecurityToken';
/**
 * An ext field RocketMQ's client adds after signing (unique-key message queries), so the broker leaves
 * it out of the signed content.
 */
export const ACL_UNSIGNED_QUERY_FLAG = '_UNIQUE_KEY_QUERY';

/** An account's credentials; `securityToken` for temporary (STS) credentials. */
export interface AclCredentials {
  readonly accessKey: string;
  readonly secretKey: string;
  readonly securityToken?: string | undefined;
}

/** Whether a field takes part in the signed content (RocketMQ leaves out the signature itself). */
function signedField(key: string, value: string | null | undefined): value is string {
  return value !== null && value !== undefined && key !== ACL_SIGNATURE && key !== ACL_UNSIGNED_QUERY_FLAG;
}

/**
 * The bytes a signature covers (RocketMQ's `AclUtils.combineRequestContent`): the values of `fields`
 * in the order of their names (Java's `TreeMap`, which compares UTF-16 code units as `sort()` does),
 * null values and the signature left out, UTF-8 encoded, followed by `body`.
 */
export function aclSignedContent(fields: ExtFields, body: Buffer | null): Buffer {
  const keys = Object.keys(fields)
    .filter((key) => signedField(key, fields[key]))
    .sort();
  let text = '';
  for (const key of keys) text += fields[key] as string;
  const head = Buffer.from(text, 'utf8');
  return body && body.length > 0 ? Buffer.concat([head, body]) : head;
}

/** RocketMQ's `AclUtils.calSignature`: HmacSHA1 of `content` under `secretKey`, Base64. */
export function aclSignature(content: Buffer, secretKey: string): string {
  return createHmac('sha1', Buffer.from(secretKey, 'utf8')).update(content).digest('base64');
}

/**
 * The ext fields of a request signed with `credentials`: `fields` plus `AccessKey`, `SecurityToken`
 * when the credentials carry one, and `Signature` over them and `body`. `fields` is left as it is.
 */
export function signExtFields(fields: ExtFields | null, body: Buffer | null, credentials: AclCredentials): ExtFields {
  // A fresh object filled in order rather than a copy with properties deleted: deleting would turn it
  // into a slow dictionary-mode object on the path of every request.
  const signed: ExtFields = {};
  if (fields)
    for (const key of Object.keys(fields))
      if (key !== ACL_SIGNATURE && key !== ACL_SECURITY_TOKEN && key !== ACL_ACCESS_KEY)
        setOwn(signed, key, fields[key] as string | null);
  signed[ACL_ACCESS_KEY] = credentials.accessKey;
  if (credentials.securityToken !== undefined) signed[ACL_SECURITY_TOKEN] = credentials.securityToken;
  signed[ACL_SIGNATURE] = aclSignature(aclSignedContent(signed, body), credentials.secretKey);
  return signed;
}
