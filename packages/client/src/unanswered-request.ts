import { deferred } from './deferred.js';
import type { PendingRequest } from './pending-requests.js';

/** A request the server answers only when it fails (CPP_THREAD_CLOSE): it settles once its frame has gone out. */
export class UnansweredRequest implements PendingRequest {
  private readonly settlement = deferred<void>();

  get promise(): Promise<void> {
    return this.settlement.promise;
  }

  observe(): boolean {
    return false;
  }

  sent(): void {
    this.settlement.resolve();
  }

  fail(error: Error): void {
    this.settlement.reject(error);
  }
}
