import { CloseCode } from '@promethea/cpp-protocol';

/** How a client reconnects after it lost an established session. Every field is optional. */
export interface ReconnectOptions {
  /** Pause before the first attempt after a loss, in milliseconds. Default 1000. */
  initialDelayMs?: number;
  /** The longest pause between attempts. Default 10 000. */
  maxDelayMs?: number;
  /** Each failed attempt multiplies the pause by this. Default 2. */
  factor?: number;
  /**
   * Share of each pause drawn at random, 0 to 1: 0.5 waits between half and all of it. Spreads the clients of a
   * restarted server over time instead of having them all come back at once. Default 0.5.
   */
  jitter?: number;
  /** Give up (status `closed`) after this many attempts in a row have failed. Default: never give up. */
  maxAttempts?: number;
}

export type ReconnectPolicy = Required<ReconnectOptions>;

export const DEFAULT_RECONNECT_POLICY: ReconnectPolicy = {
  initialDelayMs: 1000,
  maxDelayMs: 10_000,
  factor: 2,
  jitter: 0.5,
  maxAttempts: Number.POSITIVE_INFINITY,
};

/** The policy a client option asks for; `undefined` when reconnecting is off. */
export function reconnectPolicy(option: boolean | ReconnectOptions | undefined): ReconnectPolicy | undefined {
  if (option === false) return undefined;
  return { ...DEFAULT_RECONNECT_POLICY, ...(typeof option === 'object' ? option : {}) };
}

/** The pause before attempt `attempt` (1 for the first after a loss): exponential, capped, with jitter below it. */
export function reconnectDelay(policy: ReconnectPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.factor ** (attempt - 1));
  return Math.round(ceiling * (1 - policy.jitter * random()));
}

/**
 * Closes that another connection would not cure: the client or the server ended the session on purpose, or the
 * server refused this client or what it sent. Any other close (1001 shutdown, 1006 network failure, 4408 missed
 * pongs, 4429 a reader too slow, …) is worth another attempt.
 */
const FINAL_CLOSE_CODES: ReadonlySet<number> = new Set([
  CloseCode.NORMAL,
  1002, // protocol error
  1003, // unsupported data
  1007, // invalid payload data
  1008, // policy violation
  CloseCode.MESSAGE_TOO_BIG,
  CloseCode.UNAUTHORIZED,
  CloseCode.FORBIDDEN,
  CloseCode.INTERNAL_ERROR,
]);

export function isFinalClose(code: number): boolean {
  return FINAL_CLOSE_CODES.has(code);
}
