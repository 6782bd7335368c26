import { readFileSync } from 'node:fs';

/**
 * The soft limit on open files of this process (children inherit it), read from /proc on Linux; undefined
 * elsewhere. Each connection is a file descriptor in the server and another in the load generator.
 */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((text) => text.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === undefined || soft === 'unlimited' ? undefined : Number(soft);
  } catch {
    return undefined;
  }
}
