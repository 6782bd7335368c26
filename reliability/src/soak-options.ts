import { parseArgs } from 'node:util';

export interface SoakOptions {
  /** Concurrent sessions (clients), each with a thread of its own. */
  sessions: number;
  durationMs: number;
  /** The demo model's pause before each word, and its words per answer. */
  demoDelayMs: number;
  demoWords: number;
  /** Pause between two actions of a session, drawn between these. */
  thinkMs: [number, number];
  /** Every n-th session also watches the previous session's thread (a second subscriber). */
  watchEvery: number;
  /** Heap after the run may exceed the baseline by this much and still count as back near it. */
  heapToleranceBytes: number;
}

const USAGE = `usage: npm run soak -- [--sessions N] [--duration SECONDS] [--demo-delay-ms MS] [--demo-words N]
  (or SOAK_SESSIONS, SOAK_DURATION_S, SOAK_DEMO_DELAY_MS, SOAK_DEMO_WORDS)`;

export function soakOptions(argv: string[], env: NodeJS.ProcessEnv): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      sessions: { type: 'string' },
      duration: { type: 'string' },
      'demo-delay-ms': { type: 'string' },
      'demo-words': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return {
    sessions: whole(values.sessions ?? env.SOAK_SESSIONS, 500),
    durationMs: whole(values.duration ?? env.SOAK_DURATION_S, 60) * 1000,
    demoDelayMs: whole(values['demo-delay-ms'] ?? env.SOAK_DEMO_DELAY_MS, 40),
    demoWords: whole(values['demo-words'] ?? env.SOAK_DEMO_WORDS, 60),
    thinkMs: [100, 800],
    watchEvery: 5,
    heapToleranceBytes: 16 * 1024 * 1024,
  };
}

function whole(text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`expected a whole number, got ${text}\n${USAGE}`);
  return value;
}
