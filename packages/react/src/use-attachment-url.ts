import type { CPPClient } from '@promethea/cpp-client';
import { useEffect, useState } from 'react';

/**
 * The URL a prompt's file is served at (PROTOCOL.md §27.5), for an `<img src>` or a link: `undefined` until the
 * client has a ticket for it (or without a client or an id). A URL holds its ticket, which lasts an hour.
 */
export function useAttachmentUrl(client: CPPClient | null, attachmentId: string | undefined): string | undefined {
  const [url, setUrl] = useState<{ attachmentId: string; href: string }>();
  useEffect(() => {
    if (!client || attachmentId === undefined) return;
    let current = true;
    client
      .attachments()
      .then((attachments) => attachments.url(attachmentId))
      .then(
        (href) => current && setUrl({ attachmentId, href }),
        // A URL that cannot be had (the client closed) leaves the file unshown; the page says so by its absence.
        () => undefined,
      );
    return () => {
      current = false;
    };
  }, [client, attachmentId]);
  return url !== undefined && url.attachmentId === attachmentId ? url.href : undefined;
}
