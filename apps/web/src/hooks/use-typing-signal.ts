import type { CPPClient } from '@promethea/cpp-client';
import { useCallback, useEffect, useRef } from 'react';

/**
 * How often "still typing" goes out while the text changes: under the 6 s a CPP_TYPING holds (PROTOCOL.md §29.9), so
 * that the others' "typing" does not flicker off between two.
 */
const TYPING_REPEAT_MS = 3000;

/**
 * Tells the thread's members whether this person types a prompt (PROTOCOL.md §29.9): called with the message box's
 * text as it changes; `true` at most every TYPING_REPEAT_MS while text is there, `false` once it is sent or cleared.
 * Nothing is told where the person may not write.
 */
export function useTypingSignal(client: CPPClient | null, threadId: string, canWrite: boolean) {
  const lastTold = useRef<number | undefined>(undefined);
  const tell = useCallback(
    (typing: boolean) => {
      lastTold.current = typing ? Date.now() : undefined;
      client?.setTyping(typing, threadId).catch(() => undefined);
    },
    [client, threadId],
  );
  useEffect(
    () => () => {
      if (lastTold.current !== undefined) tell(false);
    },
    [tell],
  );
  return useCallback(
    (text: string) => {
      if (!canWrite) return;
      const typing = text.trim() !== '';
      const since = lastTold.current === undefined ? undefined : Date.now() - lastTold.current;
      if (typing && (since === undefined || since >= TYPING_REPEAT_MS)) tell(true);
      else if (!typing && since !== undefined) tell(false);
    },
    [canWrite, tell],
  );
}
