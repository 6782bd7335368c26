import type { ClientFrame, ServerFrame } from '@promethea/cpp-protocol';

/** A request waiting for the server frames that answer it. */
/** How much of a halted node's answer and reasoning the user had seen, in UTF-16 code units. */
export interface ReceivedLengths {
  content: number;
  reasoning: number;
}

export interface PendingRequest {
  /** Sees every valid server frame, after the mirrors have applied it; returns true once the request has settled. */
  observe(frame: ServerFrame): boolean;
  fail(error: Error): void;
  /** The thread the request acts on: closing that thread fails the request, whose answer could no longer arrive. */
  readonly threadId?: string;
  /** For a request the server does not answer: its frame is going out now, which settles it. */
  sent?(): void;
  /** The client is halting `nodeId` where the user has seen `received` of each part (a pivot, a stop, a regenerate). */
  interrupting?(nodeId: string, received: ReceivedLengths): void;
  /**
   * After a reconnect, with the mirrors re-synced: whether they show that the server already carried the request
   * out, so that its frame need not go again (a resend would be harmless, only redundant).
   */
  carriedOut?(): boolean;
}

interface Entry {
  /** The frame to send for the request; none for one whose frame the client sends itself and never again. */
  frame?: ClientFrame;
  sent: boolean;
}

/**
 * The requests waiting for answers, in the order they were made, with their frames. A frame is sent once the
 * connection is open; after a lost connection every frame counts as unsent again (it may not have arrived), and
 * goes again after the reconnect unless the re-synced mirrors show it was carried out. The ids the frames carry
 * (`newNodeId`, `newBranchNodeId`) make a repeated prompt or pivot an exact retry for the server.
 */
export class PendingRequests {
  private readonly requests = new Map<PendingRequest, Entry>();

  add(request: PendingRequest, frame?: ClientFrame): void {
    this.requests.set(request, frame ? { frame, sent: false } : { sent: true });
  }

  /** Shows the frame to every waiting request; returns whether it settled any (an error tied to a request). */
  observe(frame: ServerFrame): boolean {
    let settledAny = false;
    for (const request of [...this.requests.keys()]) {
      if (!request.observe(frame)) continue;
      this.requests.delete(request);
      settledAny = true;
    }
    return settledAny;
  }

  interrupting(nodeId: string, received: ReceivedLengths): void {
    for (const request of this.requests.keys()) request.interrupting?.(nodeId, received);
  }

  /** How many frames wait to be sent. */
  get unsentCount(): number {
    let count = 0;
    for (const entry of this.requests.values()) if (!entry.sent) count += 1;
    return count;
  }

  /**
   * The frames waiting to be sent, in order, now counted as sent. A request the server does not answer is settled
   * and forgotten here: the caller sends its frame in this same turn, before the settlement can be seen.
   */
  takeUnsent(): ClientFrame[] {
    const frames: ClientFrame[] = [];
    for (const [request, entry] of this.requests) {
      if (entry.sent || !entry.frame) continue;
      entry.sent = true;
      frames.push(entry.frame);
      if (!request.sent) continue;
      this.requests.delete(request);
      request.sent();
    }
    return frames;
  }

  /** The connection is lost: every frame is to go again; a request without a frame of its own fails. */
  connectionLost(error: Error): void {
    for (const [request, entry] of [...this.requests]) {
      if (entry.frame) entry.sent = false;
      else {
        this.requests.delete(request);
        request.fail(error);
      }
    }
  }

  /** After the threads are re-synced: frames of requests the server has carried out are not sent again. */
  skipCarriedOut(): void {
    for (const [request, entry] of this.requests) if (!entry.sent && request.carriedOut?.()) entry.sent = true;
  }

  /** The thread was closed: the requests acting on it fail with `error`. */
  failThread(threadId: string, error: Error): void {
    for (const request of [...this.requests.keys()]) {
      if (request.threadId !== threadId) continue;
      this.requests.delete(request);
      request.fail(error);
    }
  }

  failAll(error: Error): void {
    const requests = [...this.requests.keys()];
    this.requests.clear();
    for (const request of requests) request.fail(error);
  }
}
