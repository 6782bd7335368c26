// @promethea/cpp-server/logger: loads pino, so the root import does not.
export { createLogger, LOG_LEVELS, type LogLevel } from './observability/logger.js';
