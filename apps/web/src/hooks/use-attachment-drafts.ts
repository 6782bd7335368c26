import type { CPPClient } from '@promethea/cpp-client';
import { ATTACHMENTS_PER_PROMPT_MAX, type Attachment, CPPError } from '@promethea/cpp-protocol';
import { useCallback, useEffect, useRef, useState } from 'react';

/** A file picked, pasted or dropped for the next message, uploaded as soon as it is added. */
export interface AttachmentDraft {
  key: number;
  name: string;
  size: number;
  /** The type the browser guessed, for the preview only: the server decides the type from the bytes. */
  browserType: string;
  /** A `blob:` URL of an image's bytes, to show it before the server has it. */
  previewUrl: string | undefined;
  /** What the server kept, once the upload is done. */
  attachment: Attachment | undefined;
}

export interface AttachmentDrafts {
  drafts: readonly AttachmentDraft[];
  /** Some file is still on its way to the server: the message waits for it. */
  uploading: boolean;
  add(files: readonly File[]): void;
  remove(key: number): void;
  /** The files for a message being sent, in the order added; the tray empties. `restore` puts them back. */
  take(): AttachmentDraft[];
  restore(drafts: readonly AttachmentDraft[]): void;
  /** Lets the previews of files sent go: the message shows them from the server now. */
  release(drafts: readonly AttachmentDraft[]): void;
}

let lastKey = 0;

/**
 * The files of the message being written. Each is uploaded when it is added (PROTOCOL.md §27.3), so a refusal (a
 * type the server does not take, a file too large) is said at once, and the file leaves the tray; sending then only
 * names the uploads.
 */
export function useAttachmentDrafts(client: CPPClient | null, report: (error: unknown) => void): AttachmentDrafts {
  const [drafts, setDrafts] = useState<AttachmentDraft[]>([]);
  const current = useRef(drafts);
  current.current = drafts;

  const add = useCallback(
    (files: readonly File[]) => {
      if (!client || files.length === 0) return;
      const room = ATTACHMENTS_PER_PROMPT_MAX - current.current.length;
      if (files.length > room)
        report(
          new Error(
            `A message carries at most ${ATTACHMENTS_PER_PROMPT_MAX} files: ${files.length - Math.max(room, 0)} were left out.`,
          ),
        );
      const added = files.slice(0, Math.max(room, 0)).map((file) => ({
        key: (lastKey += 1),
        name: file.name || 'file',
        size: file.size,
        browserType: file.type,
        previewUrl: file.type.startsWith('image/') ? URL.createObjectURL(file) : undefined,
        attachment: undefined,
        file,
      }));
      setDrafts((shown) => [...shown, ...added.map(({ file: _file, ...draft }) => draft)]);
      for (const { key, name, previewUrl, file } of added) {
        client
          .attachments()
          .then((uploads) => uploads.upload(file))
          .then(
            (attachment) =>
              setDrafts((shown) => shown.map((draft) => (draft.key === key ? { ...draft, attachment } : draft))),
            (error: unknown) => {
              if (previewUrl) URL.revokeObjectURL(previewUrl);
              setDrafts((shown) => shown.filter((draft) => draft.key !== key));
              report(notAttached(name, error));
            },
          );
      }
    },
    [client, report],
  );

  const remove = useCallback((key: number) => {
    const removed = current.current.find((draft) => draft.key === key);
    if (removed?.previewUrl) URL.revokeObjectURL(removed.previewUrl);
    setDrafts((shown) => shown.filter((draft) => draft.key !== key));
  }, []);

  const take = useCallback(() => {
    const taken = current.current;
    setDrafts([]);
    return taken;
  }, []);

  const restore = useCallback((taken: readonly AttachmentDraft[]) => {
    setDrafts((shown) => [...taken, ...shown]);
  }, []);

  const release = useCallback((sent: readonly AttachmentDraft[]) => {
    for (const draft of sent) if (draft.previewUrl) URL.revokeObjectURL(draft.previewUrl);
  }, []);

  // Previews are the page's memory: let them go with the composer.
  useEffect(
    () => () => {
      for (const draft of current.current) if (draft.previewUrl) URL.revokeObjectURL(draft.previewUrl);
    },
    [],
  );

  return { drafts, uploading: drafts.some((draft) => !draft.attachment), add, remove, take, restore, release };
}

/** A refused upload, named: the server's own words say what it takes. */
function notAttached(name: string, error: unknown): unknown {
  if (CPPError.isInstance(error)) return new CPPError(error.code, `Could not attach ${name}: ${error.message}`);
  if (error instanceof Error) return new Error(`Could not attach ${name}: ${error.message}`);
  return error;
}
