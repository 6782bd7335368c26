import type { Logger } from 'pino';
import type { DependedService } from './server-observer.js';

/** While a service stays unreachable, the log says so again this often. */
export const OUTAGE_REMINDER_MS = 30_000;

/**
 * The log of one service's outages: a line when it becomes unreachable, one every `reminderMs` while it stays so
 * (with the number of failures meanwhile), and one when it is back, in place of a line and a stack trace for every
 * failure (a restarting database fails every background task of every instance several times a second).
 */
export class OutageLog {
  private outage: { since: number; failures: number; toldAt: number } | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly service: DependedService,
    private readonly reminderMs = OUTAGE_REMINDER_MS,
    private readonly now: () => number = Date.now,
  ) {}

  failed(error: unknown): void {
    const now = this.now();
    const reason = error instanceof Error ? error.message : String(error);
    if (!this.outage) {
      this.outage = { since: now, failures: 1, toldAt: now };
      this.logger.error({ service: this.service, error: reason }, `${this.service} unreachable`);
      return;
    }
    this.outage.failures += 1;
    if (now - this.outage.toldAt < this.reminderMs) return;
    this.outage.toldAt = now;
    const { since, failures } = this.outage;
    this.logger.warn(
      { service: this.service, error: reason, downForMs: now - since, failures },
      `${this.service} still unreachable`,
    );
  }

  reachable(): void {
    if (!this.outage) return;
    const { since, failures } = this.outage;
    this.outage = undefined;
    this.logger.info(
      { service: this.service, downForMs: this.now() - since, failures },
      `${this.service} reachable again`,
    );
  }
}
