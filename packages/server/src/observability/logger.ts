import { pino, type DestinationStream, type Level, type Logger } from 'pino';
import { currentConnectionScope } from './connection-scope.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const satisfies readonly (Level | 'silent')[];
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * A pino logger writing one JSON object per line (to stdout unless `destination` is given): level names rather
 * than numbers, ISO times, and the id of the connection on whose behalf the code runs, on every line where there
 * is one.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): Logger {
  const options = {
    level,
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: () => ({ ...currentConnectionScope() }),
  };
  return destination ? pino(options, destination) : pino(options);
}
