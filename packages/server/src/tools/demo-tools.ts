import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { ServerTools } from './server-tool.js';

export interface DemoToolsOptions {
  /** The clock's time, in milliseconds since the Unix epoch. Default: `Date.now`. */
  now?: () => number;
  /** How long `count_to` takes per number, in milliseconds. Default 1000: slow enough to pivot while it runs. */
  countDelayMs?: number;
}

/**
 * The server tools the demo's agent (`demo-tools`) calls: `clock`, the time now; `count_to`, a slow count that
 * reports its progress and stops at once when its call is aborted (the tool to pivot while it runs); and
 * `save_note`, which waits for a person's approval before it keeps a note (in memory, for the demo); and
 * `time_zone`, which has no `execute`: the person's client answers it (the web UI, from the browser).
 */
export function demoTools(options: DemoToolsOptions = {}): ServerTools {
  const now = options.now ?? Date.now;
  const countDelayMs = options.countDelayMs ?? 1000;
  const notes: string[] = [];
  return {
    clock: {
      description: 'The current date and time, in UTC (ISO 8601).',
      inputSchema: z.object({}),
      execute: () => new Date(now()).toISOString(),
    },
    count_to: {
      description: 'Counts from 1 to `to`, one number a second, reporting each; returns the numbers counted.',
      inputSchema: z.object({ to: z.number().int().min(1).max(60) }),
      execute: async ({ to }: { to: number }, { signal, reportProgress }) => {
        const counted: number[] = [];
        for (let number = 1; number <= to; number += 1) {
          await sleep(countDelayMs, undefined, { signal });
          counted.push(number);
          reportProgress({ progress: number, total: to, message: `counted ${number} of ${to}` });
        }
        return counted.join(' ');
      },
    },
    time_zone: {
      description: "The person's time zone, as their browser knows it. A client tool: the person's client answers.",
      inputSchema: z.object({}),
    },
    save_note: {
      description: 'Keeps a note for the person. Asks them first.',
      inputSchema: z.object({ text: z.string().min(1).max(1000) }),
      needsApproval: true,
      execute: ({ text }: { text: string }) => {
        notes.push(text);
        return `Saved note ${notes.length}.`;
      },
    },
  };
}
