import { useCallback, useEffect, useRef, useState } from 'react';

/** How long "Copied" stays on the button. */
export const COPIED_MS = 2000;

/**
 * Copies text to the clipboard and says so for a moment: `copied` is true for {@link COPIED_MS} after a copy that
 * worked. A copy the browser refused is reported, not silently dropped.
 */
export function useCopy(report: (error: unknown) => void): { copied: boolean; copy(text: string): void } {
  const [copied, setCopied] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const copy = useCallback(
    (text: string) => {
      navigator.clipboard.writeText(text).then(() => {
        setCopied(true);
        clearTimeout(timer.current);
        timer.current = setTimeout(() => setCopied(false), COPIED_MS);
      }, report);
    },
    [report],
  );
  return { copied, copy };
}
