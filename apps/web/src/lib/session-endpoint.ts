import { CPP_SESSION_PATH } from '@promethea/cpp-protocol';

/** The UI is served by cpp-server itself, so the session socket is on the same origin. */
export function sessionEndpoint(location: Location): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${CPP_SESSION_PATH}`;
}
