import type { Subscriber } from '../engine/subscriber.js';

/**
 * Stands in for the client of a forwarded command on the node that runs it. The engine answers a requester
 * itself only with the sync of an exact retry; the requesting node sends its own sync instead.
 */
export class ForwardedRequester implements Subscriber {
  synced = false;

  send(): void {
    this.synced = true;
  }
}
