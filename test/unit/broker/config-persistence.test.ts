/**
 * Config persistence under a flood of new names: writes are coalesced (at most one in flight, the latest
 * snapshot wins) and auto-creation of topics and groups stops at a configurable limit with a clear remark.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../../src/common/logger.js';
import { ConfigFile } from '../../../src/broker/config-file.js';
import { SubscriptionGroupManager } from '../../../src/broker/subscription-group-manager.js';
import { TopicConfigManager } from '../../../src/broker/topic-config-manager.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-cfgp-'));
});
afterEach(() => {
  jest.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

/** Counts the file writes ConfigFile performs (its private write step). */
function countWrites(): { readonly count: number } {
  const spy = jest.spyOn(ConfigFile.prototype as unknown as { write(text: string): Promise<void> }, 'write');
  return {
    get count() {
      return spy.mock.calls.length;
    },
  };
}

describe('ConfigFile coalescing', () => {
  test('calls made while a write is in flight share one later write of the latest snapshot', async () => {
    const f = new ConfigFile(path.join(dir, 'x.json'), silentLogger);
    const writes = countWrites();
    let snapshots = 0;
    const all: Array<Promise<void>> = [];
    for (let i = 0; i < 500; i++) {
      all.push(
        f.persistLatest(() => {
          snapshots++;
          return { i };
        }),
      );
    }
    await Promise.all(all);
    expect(writes.count).toBe(2);
    expect(snapshots).toBe(2);
    expect(f.load()).toEqual({ i: 499 });
  });

  test('a caller is answered only by a write that started after its call', async () => {
    const f = new ConfigFile(path.join(dir, 'x.json'), silentLogger);
    const first = f.persist({ v: 1 });
    const second = f.persist({ v: 2 });
    await second;
    expect(JSON.parse(readFileSync(f.path, 'utf8'))).toEqual({ v: 2 });
    await first;
    await f.idle();
  });

  test('a failed write rejects its callers and the next write still runs', async () => {
    const f = new ConfigFile(path.join(dir, 'x.json'), silentLogger);
    const bad = f.persistLatest(() => {
      throw new Error('snapshot failed');
    });
    const good = f.persist({ ok: true });
    await expect(bad).rejects.toThrow('snapshot failed');
    await good;
    expect(f.load()).toEqual({ ok: true });
  });
});

describe('a flood of new names', () => {
  test('2,000 new groups cost a bounded number of writes, and the file holds all of them', async () => {
    const m = new SubscriptionGroupManager({ storePath: dir, autoCreateSubscriptionGroup: true, logger: silentLogger });
    const writes = countWrites();
    for (let i = 0; i < 2000; i++) expect(m.findSubscriptionGroupConfig(`flood-g-${i}`)).toBeDefined();
    await m.persist();
    // One write started by the first group, one for everything after it, one for the persist() above.
    expect(writes.count).toBeLessThanOrEqual(3);
    const saved = JSON.parse(readFileSync(path.join(dir, 'config', 'subscriptionGroup.json'), 'utf8')) as {
      subscriptionGroupTable: Record<string, unknown>;
    };
    expect(Object.keys(saved.subscriptionGroupTable)).toHaveLength(2000);
  });

  test('group auto-creation stops at autoCreateSubscriptionGroupLimit with a remark naming the option', async () => {
    const logs: string[] = [];
    const logger = { ...silentLogger, warn: (_o: unknown, msg?: string) => void logs.push(msg ?? '') };
    const m = new SubscriptionGroupManager({
      storePath: dir,
      autoCreateSubscriptionGroup: true,
      autoCreateSubscriptionGroupLimit: 3,
      logger,
    });
    expect(m.autoCreateLimitRemark()).toBeUndefined();
    for (const g of ['a', 'b', 'c']) expect(m.findSubscriptionGroupConfig(g)).toBeDefined();
    expect(m.findSubscriptionGroupConfig('d')).toBeUndefined();
    expect(m.findSubscriptionGroupConfig('a')).toBeDefined();
    expect(m.autoCreateLimitRemark()).toMatch(/3 subscription groups.*autoCreateSubscriptionGroupLimit 3/);
    expect(logs).toContain('subscription group auto-creation limit reached');
    // explicit creation is not limited
    const a = m.findSubscriptionGroupConfig('a');
    if (!a) throw new Error('group a missing');
    m.updateSubscriptionGroupConfig({ ...a, groupName: 'explicit' });
    expect(m.selectSubscriptionGroupConfig('explicit')).toBeDefined();
    await m.persist();
  });

  test('topic auto-creation stops at autoCreateTopicLimit; system topics count', async () => {
    const m = new TopicConfigManager({
      storePath: dir,
      brokerName: 'broker-a',
      clusterName: 'DefaultCluster',
      autoCreateTopicEnable: true,
      defaultTopicQueueNums: 8,
      autoCreateTopicLimit: 12,
      scheduleTopicQueueNums: 18,
      logger: silentLogger,
    });
    const system = m.allTopics().length;
    const room = 12 - system;
    expect(room).toBeGreaterThan(0);
    for (let i = 0; i < room; i++) expect(m.createTopicInSendMessageMethod(`t${i}`, 'TBW102', 4, 0)).toBeDefined();
    expect(m.createTopicInSendMessageMethod('one-more', 'TBW102', 4, 0)).toBeUndefined();
    expect(m.autoCreateLimitRemark()).toMatch(/12 topics.*autoCreateTopicLimit 12.*UPDATE_AND_CREATE_TOPIC/);
    await m.persist();
  });
});
