import type { ClientFrame } from '@promethea/cpp-protocol';
import type { Identity } from './identity.js';

/** The frames whose operations change a thread and run the server's hooks (a pivot runs its 'pivot' listeners). */
export type HookedFrameType =
  | 'CPP_PROMPT'
  | 'CPP_REGENERATE'
  | 'CPP_CONTINUE'
  | 'CPP_STREAM_STOP'
  | 'CPP_ANCHOR_HEAD'
  | 'CPP_BRANCH_DELETE'
  | 'CPP_THREAD_RENAME'
  | 'CPP_THREAD_DELETE';

/**
 * An operation about to change a thread, as its hooks are told of it: its checks have passed and none of its steps
 * has run (docs/PROTOCOL.md §11.6). A hook that throws refuses it, and the thread is unchanged. Without a type
 * argument, the union of every operation's, told apart by `type`.
 */
export type OperationContext<Type extends HookedFrameType = HookedFrameType> = Type extends HookedFrameType
  ? {
      /** The frame that asked for the operation. */
      readonly type: Type;
      readonly threadId: string;
      /** Who asked, also when another server of a cluster forwarded the frame. */
      readonly identity: Identity;
      /** The frame's fields, as the client sent them. */
      readonly request: Extract<ClientFrame, { type: Type }>['payload'];
      /**
       * The id (in CPP_MODELS) of the model that will write the answer the operation starts: the one the request
       * names, else the default (a continue: the node's own model while it is offered). Undefined when none starts.
       */
      readonly model: string | undefined;
    }
  : never;

/** The context `frame`'s operation gives its hooks, on thread `threadId`; `model` when the operation starts an answer. */
export function operationContext<Type extends HookedFrameType>(
  frame: { readonly type: Type; readonly payload: unknown },
  threadId: string,
  identity: Identity,
  model?: string,
): OperationContext<Type> {
  // TypeScript does not resolve the distributive type for a generic `Type`; every caller passes a ClientFrame, whose
  // payload is the one its type names.
  return { type: frame.type, threadId, identity, request: frame.payload, model } as OperationContext<Type>;
}
