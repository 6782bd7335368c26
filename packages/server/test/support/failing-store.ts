import type { TreeChange } from '@promethea/cpp-protocol';
import { MemoryStore, type CommitMeta, type StreamedText } from '@promethea/cpp-server';

/** A MemoryStore whose writes can be made to fail, as a full disk or a lost database connection would. */
export class FailingStore extends MemoryStore {
  failCommits = false;
  failStreamingSaves = false;

  override async commit(change: TreeChange, meta: CommitMeta): Promise<void> {
    if (this.failCommits) throw new Error('database is locked');
    return super.commit(change, meta);
  }

  override async saveStreamedText(batch: readonly StreamedText[]): Promise<void> {
    if (this.failStreamingSaves) throw new Error('database is locked');
    return super.saveStreamedText(batch);
  }
}
