import { isThreadId } from '@promethea/cpp-protocol';
import { useCallback, useSyncExternalStore } from 'react';

/** The open thread lives in the URL fragment: a reload, a bookmark or a second tab opens the same one. */
function threadIdInLocation(): string | undefined {
  const fragment = decodeURIComponent(window.location.hash.slice(1));
  return isThreadId(fragment) ? fragment : undefined;
}

function subscribe(onChange: () => void): () => void {
  window.addEventListener('hashchange', onChange);
  return () => window.removeEventListener('hashchange', onChange);
}

export function useThreadLocation(): [string | undefined, (threadId: string) => void] {
  const threadId = useSyncExternalStore(subscribe, threadIdInLocation);
  const show = useCallback((next: string) => {
    if (next !== threadIdInLocation()) window.location.hash = next;
  }, []);
  return [threadId, show];
}
