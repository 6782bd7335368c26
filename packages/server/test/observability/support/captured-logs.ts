import type { Logger } from 'pino';
import { createLogger, type LogLevel } from '@promethea/cpp-server/logger';

export type LogLine = Record<string, unknown> & { level: string; msg: string };

/** A logger whose JSON lines are kept, parsed, for the test to read. */
export function captureLogs(level: LogLevel = 'debug'): { logger: Logger; lines: LogLine[]; text(): string } {
  const written: string[] = [];
  const logger = createLogger(level, { write: (line: string) => void written.push(line) });
  return {
    logger,
    get lines() {
      return written.map((line) => JSON.parse(line) as LogLine);
    },
    text: () => written.join(''),
  };
}
