import { THREAD_TITLE_MAX_LENGTH } from '@promethea/cpp-protocol';

/**
 * A title for an imported thread that no thread in `taken` has: its own, or with " (copy)", " (copy 2)"… after it.
 * An import of an export made here would otherwise sit in the list as a look-alike of the thread it came from.
 */
export function distinctTitle(title: string, taken: ReadonlySet<string>): string {
  if (!taken.has(title)) return title;
  for (let copy = 1; ; copy += 1) {
    const suffix = copy === 1 ? ' (copy)' : ` (copy ${copy})`;
    const candidate = `${(title || 'New conversation').slice(0, THREAD_TITLE_MAX_LENGTH - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}
