import type { ClientFrame } from '@promethea/cpp-protocol';
import type { Identity } from '../engine/identity.js';
import type { PivotRequest } from '../engine/pivot-context.js';
import type { Subscriber } from '../engine/subscriber.js';
import type { ContinueRequest, PromptRequest, RegenerateRequest, StopRequest, ThreadEngine } from '../engine/thread-engine.js';

/** A thread frame that must run where the thread's generation runs: it may halt that generation, or needs it ended. */
export type ThreadCommand =
  | { type: 'CPP_PROMPT'; request: PromptRequest }
  | { type: 'CPP_PIVOT_INIT'; request: PivotRequest & { expectedVersion?: number }; identity: Identity }
  | { type: 'CPP_STREAM_STOP'; request: StopRequest }
  | { type: 'CPP_REGENERATE'; request: RegenerateRequest }
  | { type: 'CPP_CONTINUE'; request: ContinueRequest };

/** The client frame that asks for the command, for the node that will run it. */
export function commandFrame(threadId: string, command: ThreadCommand): ClientFrame {
  const timestamp = Date.now();
  switch (command.type) {
    case 'CPP_PROMPT':
      return { type: command.type, timestamp, payload: { activeThreadId: threadId, ...command.request } };
    case 'CPP_PIVOT_INIT': {
      const { threadId: activeThreadId, receivedContentLength, receivedReasoningLength, ...request } = command.request;
      return {
        type: command.type,
        timestamp,
        payload: {
          activeThreadId,
          ...request,
          ...(receivedContentLength === undefined ? {} : { receivedContentLength }),
          ...(receivedReasoningLength === undefined ? {} : { receivedReasoningLength }),
        },
      };
    }
    case 'CPP_STREAM_STOP':
      return { type: command.type, timestamp, payload: { activeThreadId: threadId, ...command.request } };
    case 'CPP_REGENERATE':
      return { type: command.type, timestamp, payload: { activeThreadId: threadId, ...command.request } };
    case 'CPP_CONTINUE':
      return { type: command.type, timestamp, payload: { activeThreadId: threadId, ...command.request } };
  }
}

/** Runs a forwarded frame on this node's engine of the thread, as a frame of one of its own clients would run. */
export function runCommand(engine: ThreadEngine, frame: ClientFrame, identity: Identity, requester: Subscriber): Promise<void> {
  switch (frame.type) {
    case 'CPP_PROMPT': {
      const { activeThreadId: _threadId, ...request } = frame.payload;
      return engine.prompt(request, requester);
    }
    case 'CPP_PIVOT_INIT': {
      const { activeThreadId, receivedContentLength, ...request } = frame.payload;
      return engine.pivot({ ...request, threadId: activeThreadId, receivedContentLength }, identity, requester);
    }
    case 'CPP_STREAM_STOP': {
      const { activeThreadId: _threadId, ...request } = frame.payload;
      return engine.stop(request);
    }
    case 'CPP_REGENERATE': {
      const { activeThreadId: _threadId, ...request } = frame.payload;
      return engine.regenerate(request, requester);
    }
    case 'CPP_CONTINUE': {
      const { activeThreadId: _threadId, ...request } = frame.payload;
      return engine.continue(request, requester);
    }
    default:
      throw new Error(`${frame.type} is not forwarded between nodes`);
  }
}
