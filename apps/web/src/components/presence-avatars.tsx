import type { PresentIdentity } from '@promethea/cpp-protocol';
import { memberName } from '../lib/member-name.js';

interface PresenceAvatarsProps {
  /** Who has the thread open (PROTOCOL.md §29.9), this browser's identity among them. */
  present: readonly PresentIdentity[];
  ownDid: string | undefined;
}

/** The other members who have this conversation open now, each by the end of its DID, and who of them types. */
export function PresenceAvatars({ present, ownDid }: PresenceAvatarsProps) {
  const others = present.filter(({ did }) => did !== ownDid);
  if (others.length === 0) return null;
  return (
    <ul className="presence" aria-label="Also here">
      {others.map(({ did, typing }) => (
        <li key={did} className={`presence-avatar${typing ? ' typing' : ''}`} title={did}>
          <span aria-hidden="true">{did.slice(-2)}</span>
          <span className="visually-hidden">{memberName(did)}</span>
          {typing && <span className="presence-typing">typing…</span>}
        </li>
      ))}
    </ul>
  );
}
