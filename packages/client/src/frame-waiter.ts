import type { ServerFrame } from '@promethea/cpp-protocol';
import { CPPServerError } from './cpp-server-error.js';
import { deferred } from './deferred.js';
import type { PendingRequest } from './pending-requests.js';

/** What a waiter's answer test returns once the frame it waits for has come. */
export type Answer<Value> = { value: Value } | undefined;

/**
 * A request answered by one server frame that `answer` recognises, or refused by a CPP_ERROR naming the request
 * frame's id. `answer` sees error frames first, so a request may take an error as its answer.
 */
export class FrameWaiter<Value> implements PendingRequest {
  private readonly settlement = deferred<Value>();

  constructor(
    private readonly frameId: string,
    private readonly answer: (frame: ServerFrame) => Answer<Value>,
    readonly threadId?: string,
  ) {}

  get promise(): Promise<Value> {
    return this.settlement.promise;
  }

  observe(frame: ServerFrame): boolean {
    const answer = this.answer(frame);
    if (answer) {
      this.settlement.resolve(answer.value);
      return true;
    }
    if (frame.type === 'CPP_ERROR' && frame.payload.refId === this.frameId) {
      this.settlement.reject(CPPServerError.fromFrame(frame.payload));
      return true;
    }
    return false;
  }

  fail(error: Error): void {
    this.settlement.reject(error);
  }
}
