import { MessageStore } from '../../../src/store/message-store.js';
import { runMessageStoreConformance } from './conformance.js';

runMessageStoreConformance('file store (MessageStore)', {
  persistent: true,
  open: (dir, options) => MessageStore.open({ ...options, storePath: dir }),
});

// The same suite with the read cache off: every record comes from a positional read of the segment
// (the read window, and pull bodies that are that window without a copy).
runMessageStoreConformance('file store (MessageStore), no read cache', {
  persistent: true,
  open: (dir, options) => MessageStore.open({ readCacheSizeBytes: 0, ...options, storePath: dir }),
});
