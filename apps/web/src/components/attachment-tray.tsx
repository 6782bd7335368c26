import type { AttachmentDraft } from '../hooks/use-attachment-drafts.js';
import { fileSize, typeName } from '../lib/file-size.js';
import { Icon } from './icons.js';

interface AttachmentTrayProps {
  drafts: readonly AttachmentDraft[];
  onRemove(key: number): void;
}

/** The files the next message carries, before it is sent: a thumbnail or a chip each, and a way to take it out. */
export function AttachmentTray({ drafts, onRemove }: AttachmentTrayProps) {
  if (drafts.length === 0) return null;
  return (
    <ul className="attachment-tray" aria-label="Files to send">
      {drafts.map((draft) => {
        const mediaType = draft.attachment?.mediaType ?? draft.browserType;
        return (
          <li
            key={draft.key}
            className={`attachment-draft${draft.attachment ? '' : ' uploading'}`}
            aria-busy={!draft.attachment}
          >
            {draft.previewUrl ? (
              <img className="attachment-thumb" src={draft.previewUrl} alt="" />
            ) : (
              <span className="attachment-thumb attachment-file-icon">
                <Icon name="file" />
              </span>
            )}
            <span className="attachment-text">
              <span className="attachment-name">{draft.name}</span>
              <span className="attachment-meta muted">
                {draft.attachment ? `${typeName(mediaType)} · ${fileSize(draft.size)}` : 'Uploading…'}
              </span>
            </span>
            <button
              type="button"
              className="quiet attachment-remove"
              aria-label={`Remove ${draft.name}`}
              title={`Remove ${draft.name}`}
              onClick={() => onRemove(draft.key)}
            >
              ✕
            </button>
          </li>
        );
      })}
    </ul>
  );
}
