import { createHash } from 'node:crypto';
import { newAttachmentId, type Attachment } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { type AttachmentRecord, type ConversationStore, putAttachment } from '../../src/store/conversation-store.js';
import { StoreConflictError } from '../../src/store/store-conflict-error.js';
import { loadSound, type ThreadDriver } from './thread-driver.js';

const ALICE = 'did:example:alice';
const BOB = 'did:example:bob';

export interface AttachmentContractContext {
  store(): ConversationStore;
  startThread(ownerDid?: string): Promise<ThreadDriver>;
}

/** An attachment of `text`'s bytes, uploaded by `ownerDid` at `createdAt`, with the record and the bytes to put. */
export function uploaded(
  text: string,
  options: { ownerDid?: string; createdAt?: number; name?: string } = {},
): { record: AttachmentRecord; bytes: Uint8Array; attachment: Attachment } {
  const bytes = new TextEncoder().encode(text);
  const attachment: Attachment = {
    id: newAttachmentId(),
    name: options.name ?? 'notes.txt',
    mediaType: 'text/plain',
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
  const record = {
    ...attachment,
    ownerDid: options.ownerDid ?? ALICE,
    threadId: null,
    createdAt: options.createdAt ?? 1000,
  };
  return { record, bytes, attachment };
}

/** The attachment part of the store contract (docs/PROTOCOL.md §27): run by `describeConversationStoreContract`. */
export function describeAttachmentContract(context: AttachmentContractContext): void {
  describe('attachments', () => {
    const put = async (file: ReturnType<typeof uploaded>) => {
      await putAttachment(context.store(), file.record, file.bytes);
      return file;
    };
    const bytesOf = (file: ReturnType<typeof uploaded>) => context.store().attachmentBytes(file.record.sha256);
    const recordOf = async (file: ReturnType<typeof uploaded>) =>
      (await context.store().loadAttachments([file.record.id]))[0];

    /** A prompt and its answer, finished: a thread has one streaming node at most. */
    const exchange = async (driver: ThreadDriver, text: string, options: Parameters<ThreadDriver['prompt']>[1]) => {
      const ids = await driver.prompt(text, options);
      await driver.finish({ nodeId: ids.assistantNodeId, status: 'completed', content: 'Seen' });
      return ids;
    };

    it('keeps an upload with its bytes, its thread null, and gives records back in the order asked', async () => {
      const first = await put(uploaded('first'));
      const second = await put(uploaded('second', { name: 'b.md' }));

      expect(await context.store().loadAttachments([second.record.id, 'att_missing', first.record.id])).toStrictEqual([
        second.record,
        first.record,
      ]);
      expect(await bytesOf(first)).toStrictEqual(first.bytes);
    });

    it('keeps an upload written in pieces as their bytes, and nothing of one closed before its finish', async () => {
      // Its size unknown, as declared, and declared wrong either way: the bytes written decide.
      for (const [index, size] of [undefined, 33, 5, 40].entries()) {
        const whole = uploaded(`the ${index}. piece, é, then the rest`);
        const upload = await context.store().openAttachment(size);
        for (const piece of [whole.bytes.subarray(0, 7), whole.bytes.subarray(7, 8), whole.bytes.subarray(8)])
          await upload.write(piece);
        await upload.finish(whole.record);
        await upload.close();
        expect(await bytesOf(whole)).toStrictEqual(whole.bytes);
      }

      const given = uploaded('given up halfway', { ownerDid: BOB });
      const dropped = await context.store().openAttachment();
      await dropped.write(given.bytes);
      await dropped.close();
      await dropped.close();
      expect(await recordOf(given)).toBeUndefined();
      expect(await bytesOf(given)).toBeUndefined();
      expect(await context.store().uploadedBytesSince(BOB, 0)).toBe(0);
    });

    it('keeps the metadata of an image and refuses a taken id', async () => {
      const image = uploaded('not really a png');
      const record = { ...image.record, mediaType: 'image/png' as const, width: 640, height: 480 };
      await putAttachment(context.store(), record, image.bytes);

      expect(await context.store().loadAttachments([record.id])).toStrictEqual([record]);
      await expect(putAttachment(context.store(), record, image.bytes)).rejects.toSatisfy(
        StoreConflictError.isInstance,
      );
    });

    it('keeps bytes once for two uploads of the same content, until neither is kept', async () => {
      const first = await put(uploaded('same', { createdAt: 10 }));
      const second = await put(uploaded('same', { createdAt: 20 }));
      expect(first.record.sha256).toBe(second.record.sha256);

      expect(await context.store().deleteUnusedAttachments(15)).toBe(1);
      expect(await recordOf(first)).toBeUndefined();
      expect(await bytesOf(second)).toStrictEqual(second.bytes);

      expect(await context.store().deleteUnusedAttachments(21)).toBe(1);
      expect(await bytesOf(second)).toBeUndefined();
    });

    it('counts the bytes an identity uploaded since a time', async () => {
      await put(uploaded('12345', { createdAt: 10 }));
      await put(uploaded('1234567', { createdAt: 20 }));
      await put(uploaded('123', { createdAt: 30, ownerDid: BOB }));

      expect(await context.store().uploadedBytesSince(ALICE, 0)).toBe(12);
      expect(await context.store().uploadedBytesSince(ALICE, 15)).toBe(7);
      expect(await context.store().uploadedBytesSince(BOB, 0)).toBe(3);
      expect(await context.store().uploadedBytesSince('did:example:carol', 0)).toBe(0);
    });

    it('gives a committed prompt its attachments, makes them the thread’s, and keeps them from the sweep', async () => {
      const file = await put(uploaded('carried'));
      const driver = await context.startThread();
      const { userNodeId } = await driver.prompt('Read this', { attachments: [file.attachment] });

      const { graph } = await loadSound(context.store(), driver.threadId);
      expect(graph.nodes[userNodeId]?.attachments).toStrictEqual([file.attachment]);
      expect(await recordOf(file)).toStrictEqual({ ...file.record, threadId: driver.threadId });
      expect(await context.store().deleteUnusedAttachments(Number.MAX_SAFE_INTEGER)).toBe(0);
      expect(await bytesOf(file)).toStrictEqual(file.bytes);
      await driver.expectStoreToMatch();
    });

    it('lets a thread carry its attachment again, and refuses one that is another thread’s or gone', async () => {
      const file = await put(uploaded('carried'));
      const driver = await context.startThread();
      const first = await exchange(driver, 'Read this', { attachments: [file.attachment] });
      await exchange(driver, 'Again', { parentNodeId: first.userNodeId, attachments: [file.attachment] });

      const other = await context.startThread();
      await expect(other.prompt('Mine now', { attachments: [file.attachment] })).rejects.toSatisfy(
        StoreConflictError.isInstance,
      );
      const gone = uploaded('never stored');
      await expect(other.prompt('Gone', { attachments: [gone.attachment] })).rejects.toSatisfy(
        StoreConflictError.isInstance,
      );
      expect((await loadSound(context.store(), other.threadId)).graph.rootNodeId).toBeNull();
      await driver.expectStoreToMatch();
    });

    it('frees an attachment, and bytes no other has, once a deleted branch took the last node carrying it', async () => {
      const kept = await put(uploaded('kept'));
      const twice = await put(uploaded('twice'));
      const driver = await context.startThread();
      const root = await exchange(driver, 'Root', { attachments: [kept.attachment] });
      const branch = await exchange(driver, 'Branch', {
        parentNodeId: root.assistantNodeId,
        attachments: [twice.attachment],
      });
      const again = await exchange(driver, 'Again', {
        parentNodeId: root.assistantNodeId,
        attachments: [twice.attachment],
      });

      await driver.deleteBranch(branch.userNodeId);
      expect(await recordOf(twice)).toBeDefined();

      await driver.deleteBranch(again.userNodeId);
      expect(await recordOf(twice)).toBeUndefined();
      expect(await bytesOf(twice)).toBeUndefined();
      expect(await bytesOf(kept)).toStrictEqual(kept.bytes);
      await driver.expectStoreToMatch();
    });

    it('frees every attachment of a deleted thread, keeping bytes a pending upload still has', async () => {
      const carried = await put(uploaded('shared bytes'));
      const pending = await put(uploaded('shared bytes'));
      const driver = await context.startThread();
      await driver.prompt('Read this', { attachments: [carried.attachment] });

      expect(await context.store().deleteThread(driver.threadId)).toBe(true);

      expect(await recordOf(carried)).toBeUndefined();
      expect(await recordOf(pending)).toStrictEqual(pending.record);
      expect(await bytesOf(pending)).toStrictEqual(pending.bytes);
    });
  });
}
