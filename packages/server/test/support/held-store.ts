import type { TreeChange } from '@promethea/cpp-protocol';
import { MemoryStore, type CommitMeta } from '@promethea/cpp-server';

/** A store whose commits wait, once `hold` is called, until `release`: a slow disk or a distant database. */
export class HeldStore extends MemoryStore {
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  override async commit(change: TreeChange, meta: CommitMeta): Promise<void> {
    await this.gate;
    return super.commit(change, meta);
  }
}
