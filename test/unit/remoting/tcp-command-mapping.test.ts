import { InvalidArgumentError } from '../../../src/common/errors.js';
import { RequestCode } from '../../../src/protocol/request-code.js';
import { requestToWire } from '../../../src/remoting/tcp-command-mapping.js';

const pullHeader = {
  consumerGroup: 'G1',
  topic: 'T1',
  queueId: 3,
  queueOffset: 12345,
  maxMsgNums: 32,
  sysFlag: 3,
  commitOffset: 12000,
  suspendTimeoutMillis: 15000,
  subscription: '*',
  subVersion: 1796157541464,
  expressionType: 'TAG',
  bname: 'broker-a',
};

describe('requestToWire: the request header against its command schema', () => {
  it('refuses a header the schema rejects, naming the field', () => {
    const bad = { ...pullHeader, queueId: 'three' };
    expect(() => requestToWire({ code: RequestCode.PULL_MESSAGE, header: bad })).toThrow(InvalidArgumentError);
    expect(() => requestToWire({ code: RequestCode.PULL_MESSAGE, header: bad })).toThrow(/queueId/);
  });

  it('sends a header marked headerChecked as it is, with the same extFields as a checked one', () => {
    const checked = requestToWire({ code: RequestCode.PULL_MESSAGE, header: pullHeader });
    const trusted = requestToWire({ code: RequestCode.PULL_MESSAGE, header: pullHeader, headerChecked: true });
    expect(trusted).toEqual(checked);
    expect(trusted.extFields.queueOffset).toBe('12345');
    // Not checked again: a value the schema would refuse goes out as given (the broker checks it).
    const odd = requestToWire({
      code: RequestCode.PULL_MESSAGE,
      header: { ...pullHeader, queueId: 'three' },
      headerChecked: true,
    });
    expect(odd.extFields.queueId).toBe('three');
  });
});
