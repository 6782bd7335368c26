import { pino, type DestinationStream, type Level, type Logger } from 'pino';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly (
  | Level
  | 'silent'
)[];
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * A pino logger writing one JSON object per line (to stdout unless `destination` is given): level names rather
 * than numbers, and ISO times. The lines name the connection where there is one: each says so itself (an
 * AsyncLocalStorage carrying it would put a hook on every promise of the process, the model streams' included).
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return destination ? pino(options, destination) : pino(options);
}
