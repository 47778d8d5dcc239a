import { MessageStore } from '../../../src/store/message-store.js';
import { runMessageStoreConformance } from './conformance.js';

runMessageStoreConformance('file store (MessageStore)', {
  persistent: true,
  open: (dir, options) => MessageStore.open({ ...options, storePath: dir }),
});
