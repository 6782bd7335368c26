import { type Attachment, CPPError, ErrorCode } from '@promethea/cpp-protocol';
import type { ConversationStore } from '../store/conversation-store.js';
import type { Identity } from './identity.js';

/**
 * The files a prompt names, as its user node will carry them (docs/PROTOCOL.md §27.4): each one the identity
 * uploaded that no thread carries yet, or one this thread carries already (an edit or a new branch carrying it
 * again). Any other is NOT_FOUND, worded as for an id that never existed, so that another identity's file is not
 * told apart from none. `undefined` when the prompt names none.
 */
export async function promptAttachments(
  store: ConversationStore,
  threadId: string,
  identity: Identity,
  ids: readonly string[] | undefined,
): Promise<Attachment[] | undefined> {
  if (!ids?.length) return undefined;
  const records = new Map((await store.loadAttachments(ids)).map((record) => [record.id, record]));
  return ids.map((id) => {
    const record = records.get(id);
    const usable =
      record !== undefined &&
      (record.threadId === threadId || (record.threadId === null && record.ownerDid === identity.did));
    if (!usable) throw new CPPError(ErrorCode.NOT_FOUND, `attachment ${id} does not exist`);
    const { ownerDid: _owner, threadId: _thread, createdAt: _created, ...attachment } = record;
    return attachment;
  });
}
