import { type Attachment, isImageType } from '@promethea/cpp-protocol';
import { useAttachmentUrl } from '@promethea/cpp-react';
import { useContext, useEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { AttachmentClient } from '../hooks/attachment-client.js';
import { fileSize, typeName } from '../lib/file-size.js';
import { Icon } from './icons.js';

/**
 * The files a prompt carries, as the server keeps them: images as thumbnails that open full size, every other file
 * as a chip with its name, type and size that downloads it (the server serves it as a download, never inline).
 */
export function MessageAttachments({ attachments }: { attachments: readonly Attachment[] }) {
  const [open, setOpen] = useState<Attachment>();
  return (
    <>
      <ul className="message-attachments" aria-label="Files">
        {attachments.map((attachment) => (
          <li key={attachment.id}>
            {isImageType(attachment.mediaType) ? (
              <ImageThumbnail attachment={attachment} onOpen={() => setOpen(attachment)} />
            ) : (
              <FileChip attachment={attachment} />
            )}
          </li>
        ))}
      </ul>
      {open && <Lightbox attachment={open} onClose={() => setOpen(undefined)} />}
    </>
  );
}

function useUrl(attachment: Attachment): string | undefined {
  return useAttachmentUrl(useContext(AttachmentClient), attachment.id);
}

function ImageThumbnail({ attachment, onOpen }: { attachment: Attachment; onOpen(): void }) {
  const url = useUrl(attachment);
  return (
    <button
      type="button"
      className="attachment-image"
      aria-label={`View ${attachment.name}`}
      title={`${attachment.name}: view full size`}
      aria-haspopup="dialog"
      onClick={onOpen}
    >
      {url ? (
        <img src={url} alt="" width={attachment.width} height={attachment.height} />
      ) : (
        <span className="attachment-image-placeholder" />
      )}
    </button>
  );
}

function FileChip({ attachment }: { attachment: Attachment }) {
  const url = useUrl(attachment);
  const content = (
    <>
      <Icon name="file" />
      <span className="attachment-text">
        <span className="attachment-name">{attachment.name}</span>
        <span className="attachment-meta">
          {typeName(attachment.mediaType)} · {fileSize(attachment.size)}
        </span>
      </span>
    </>
  );
  return url ? (
    <a className="attachment-chip" href={url} download={attachment.name}>
      {content}
    </a>
  ) : (
    <span className="attachment-chip">{content}</span>
  );
}

/**
 * An image full size, over the page, as a modal dialog: Esc or Close ends it, and the focus goes back. In the body,
 * not in the message: the message list's own keys (Esc goes back to the message) are not the dialog's.
 */
function Lightbox({ attachment, onClose }: { attachment: Attachment; onClose(): void }) {
  const url = useUrl(attachment);
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const shown = dialog.current;
    shown?.showModal();
    return () => shown?.close();
  }, []);
  const pixels = attachment.width && attachment.height ? ` · ${attachment.width} × ${attachment.height} pixels` : '';
  return createPortal(
    // biome-ignore lint/a11y/useKeyWithClickEvents: a click beside the image closes it, as in other apps; the keyboard has Esc and Close
    <dialog
      ref={dialog}
      className="lightbox"
      aria-label={attachment.name}
      onClose={onClose}
      onClick={(event) => {
        if (event.target === event.currentTarget) dialog.current?.close();
      }}
    >
      <figure>
        {url && <img src={url} alt={attachment.name} width={attachment.width} height={attachment.height} />}
        <figcaption>
          {attachment.name}
          <span className="muted">
            {pixels} · {fileSize(attachment.size)}
          </span>
        </figcaption>
      </figure>
      {/* biome-ignore lint/a11y/noAutofocus: a modal dialog gives the focus to its one control, as the platform does */}
      <button type="button" className="lightbox-close" autoFocus onClick={() => dialog.current?.close()}>
        Close
      </button>
    </dialog>,
    document.body,
  );
}
