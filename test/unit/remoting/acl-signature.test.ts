import { aclSignedContent, aclSignature, signExtFields } from '../../../src/remoting/acl-signature.js';

// Expected signatures computed once by RocketMQ 4.9.8's own AclClientRPCHook.doBeforeRequest on the same
// header and body.
describe('RocketMQ ACL signature', () => {
  const sendHeader = {
    a: 'pg',
    b: 'TopicA',
    c: 'TBW102',
    d: '4',
    e: '2',
    f: '0',
    g: '1700000000000',
    h: '0',
    i: 'TAGS\u0001tagA\u0002KEYS\u0001k1\u0002',
    j: '0',
    k: 'false',
    l: null,
    m: 'false',
  };

  it('signs a SEND_MESSAGE_V2 header and body as AclClientRPCHook does', () => {
    const signed = signExtFields(sendHeader, Buffer.from('héllo body', 'utf8'), {
      accessKey: 'appUser',
      secretKey: 'appSecret123',
    });
    expect(signed.AccessKey).toBe('appUser');
    expect(signed.Signature).toBe('9aaCJrfT9PfnhcdNTNSk8CgcqY4=');
    expect(signed.SecurityToken).toBeUndefined();
    expect(sendHeader).not.toHaveProperty('Signature');
  });

  it('signs a request without header or body, with a security token and a non-ASCII access key', () => {
    const signed = signExtFields(null, null, { accessKey: 'aké', secretKey: 'sk', securityToken: 'tok' });
    expect(signed).toEqual({ AccessKey: 'aké', SecurityToken: 'tok', Signature: 'qXK2uJM30ID4gl/+2I+eJ1MwZ2I=' });
  });

  it('re-signing replaces an old signature and token instead of signing over them', () => {
    const once = signExtFields({ topic: 'T' }, null, { accessKey: 'a', secretKey: 's', securityToken: 'old' });
    const twice = signExtFields(once, null, { accessKey: 'a', secretKey: 's' });
    expect(twice).toEqual(signExtFields({ topic: 'T' }, null, { accessKey: 'a', secretKey: 's' }));
  });

  it('leaves the signature and the unique-key query flag out of the signed content', () => {
    const content = aclSignedContent({ b: '2', a: '1', Signature: 'x', _UNIQUE_KEY_QUERY: 'true' }, Buffer.from('z'));
    expect(content.toString('utf8')).toBe('12z');
    expect(aclSignature(content, 'k')).toBe(aclSignature(Buffer.from('12z'), 'k'));
  });
});
