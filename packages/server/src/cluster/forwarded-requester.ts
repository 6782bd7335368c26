import type { Subscriber } from '../engine/subscriber.js';

/**
 * Stands in for the client of a forwarded command on the instance that runs it. The engine answers a requester
 * itself only with the sync of an exact retry; the requesting instance sends its own sync instead.
 */
export class ForwardedRequester implements Subscriber {
  synced = false;

  send(): void {
    this.synced = true;
  }
}
