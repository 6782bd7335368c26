import type { ConnectionState } from '@promethea/cpp-react';

const LABELS: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Offline',
};

export function ConnectionBadge({ connection }: { connection: ConnectionState }) {
  return (
    <p className={`connection connection-${connection}`} role="status" aria-label={`Connection: ${LABELS[connection]}`}>
      <span className="connection-dot" aria-hidden="true" />
      {LABELS[connection]}
    </p>
  );
}
