import type { CPPClient } from '@promethea/cpp-client';
import { useEffect } from 'react';

/** An invite as a link of this page: `#/join/TOKEN` (docs/PROTOCOL.md §29.8); a fragment no server ever receives. */
const JOIN_LINK = /^\/join\/(cppinv_[A-Za-z0-9_-]{43})$/;

/** The invite token the URL's fragment carries, if it is a join link. */
export function joinTokenInLocation(): string | undefined {
  return JOIN_LINK.exec(decodeURIComponent(window.location.hash.slice(1)))?.[1];
}

/**
 * Opening a join link joins its thread as this browser's identity, once the client has proven it, and shows the
 * thread in place of the link (replaced, so that Back does not present the token again).
 */
export function useJoinLink(client: CPPClient | null, report: (error: unknown) => void): void {
  useEffect(() => {
    const token = joinTokenInLocation();
    if (!client || token === undefined) return;
    client.acceptInvite(token).then(
      ({ threadId }) => window.location.replace(`#${threadId}`),
      (error: unknown) => {
        window.location.replace('#');
        report(error);
      },
    );
  }, [client, report]);
}
