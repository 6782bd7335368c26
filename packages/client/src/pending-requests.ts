import type { ServerFrame } from '@promethea/cpp-protocol';

/** A request waiting for the server frames that answer it. */
export interface PendingRequest {
  /** Sees every valid server frame, after the mirrors have applied it; returns true once the request has settled. */
  observe(frame: ServerFrame): boolean;
  fail(error: Error): void;
  /** The client is halting `nodeId` where the user has seen `receivedContentLength` of it (a pivot or a stop). */
  interrupting?(nodeId: string, receivedContentLength: number): void;
}

export class PendingRequests {
  private readonly requests = new Set<PendingRequest>();

  add(request: PendingRequest): void {
    this.requests.add(request);
  }

  /** Shows the frame to every waiting request; returns whether it settled any (an error tied to a request). */
  observe(frame: ServerFrame): boolean {
    let settledAny = false;
    for (const request of [...this.requests]) {
      if (!request.observe(frame)) continue;
      this.requests.delete(request);
      settledAny = true;
    }
    return settledAny;
  }

  interrupting(nodeId: string, receivedContentLength: number): void {
    for (const request of this.requests) request.interrupting?.(nodeId, receivedContentLength);
  }

  failAll(error: Error): void {
    const requests = [...this.requests];
    this.requests.clear();
    for (const request of requests) request.fail(error);
  }
}
