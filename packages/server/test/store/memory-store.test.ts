import { MemoryStore } from '../../src/store/memory-store.js';
import { describeConversationStoreContract } from './conversation-store-contract.js';

describeConversationStoreContract('MemoryStore', async () => ({ store: new MemoryStore() }));
