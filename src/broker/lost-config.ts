/**
 * At start, a config file missing together with its .bak while the commit log holds messages was lost
 * (deleted, or never written before a crash): it is said loudly, with what it costs, rather than the
 * broker silently starting empty.
 */
import path from 'node:path';
import type { MessageStore } from '../store/index.js';
import type { ResolvedBrokerOptions } from './broker-options.js';
import type { ConfigLoadSource } from './config-file.js';

/** What losing each config file costs, and how loudly it is said. */
const CONSEQUENCES: Record<string, { consequence: string; level: 'warn' | 'error' }> = {
  'topics.json': {
    consequence: 'topics created earlier are unknown until created again (pulls answer TOPIC_NOT_EXIST)',
    level: 'error',
  },
  'consumerOffset.json': {
    consequence: 'committed consumer offsets are lost; groups start again from their ConsumeFromWhere',
    level: 'error',
  },
  'subscriptionGroup.json': {
    consequence: 'subscription group settings are lost; groups are created again with the defaults',
    level: 'warn',
  },
};

/** Logs each file of `loadedFrom` (file name → where it was read from) that was lost. */
export function reportLostConfig(
  store: MessageStore,
  options: Pick<ResolvedBrokerOptions, 'logger' | 'storePath'>,
  loadedFrom: Record<keyof typeof CONSEQUENCES, ConfigLoadSource>,
): void {
  if (store.getCommitLogMaxOffset() <= 0) return;
  const bytes = store.getCommitLogMaxOffset() - store.getCommitLogMinOffset();
  for (const [file, from] of Object.entries(loadedFrom)) {
    const what = CONSEQUENCES[file];
    if (from !== 'none' || !what) continue;
    options.logger[what.level](
      { file: path.join(options.storePath, 'config', file), commitLogBytes: bytes },
      `${file} and its .bak are missing although the store holds messages: ${what.consequence}`,
    );
  }
}
