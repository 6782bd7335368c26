import { decodeClientFrame, ErrorCode } from '@promethea/cpp-protocol';
import type { Mutation, Pick, Recipe, ValidRecipe } from './fuzz-recipes.js';

/** The ids the fuzzer has seen in the server's frames, which recipes pick from. */
export interface IdPools {
  threadIds: string[];
  nodeIds: string[];
  /** The thread of each node seen. */
  threadOfNode: Map<string, string>;
}

export type WireFrame = { data: string | Uint8Array; binary: boolean; bytes: number };

/** How the server must answer a frame, as far as can be known before sending it. */
export type Expectation =
  /** Refused at the edge, in order with the connection's other such refusals. */
  | { kind: 'edge-error'; code: ErrorCode; refId?: string }
  /** Decoded: answered later, if at all, by the thread it names. */
  | { kind: 'handled' }
  /** Ends the connection with this close code. */
  | { kind: 'close'; code: number };

/** The codes only the decoding edge gives, at once and in the order of the frames. */
export const EDGE_CODES: readonly ErrorCode[] = [
  ErrorCode.BAD_FRAME,
  ErrorCode.INVALID_FRAME,
  ErrorCode.UNKNOWN_TYPE,
  ErrorCode.FRAME_TOO_LARGE,
];

export class FrameRenderer {
  private sequence = 0;

  constructor(
    private readonly pools: IdPools,
    private readonly maxFrameBytes: number,
  ) {}

  /**
   * `messageLimitBytes`: the largest message the transport takes on this connection (past it, close 1009): eight
   * frame limits, or 4 KiB while a proof is awaited (PROTOCOL.md §3.2).
   */
  render(recipe: Recipe, messageLimitBytes = this.maxFrameBytes * 8): { frame: WireFrame; expected: Expectation } {
    const text = (data: string) => this.text(data, messageLimitBytes);
    switch (recipe.kind) {
      case 'valid':
        return text(JSON.stringify(this.envelope(recipe.frame, recipe.withId)));
      case 'mutated':
        return text(mutate(this.envelope(recipe.frame, true), recipe.mutation));
      case 'garbage':
        return text(recipe.text);
      case 'json':
        return text(JSON.stringify(recipe.value) ?? 'undefined');
      case 'binary':
        return {
          frame: { data: recipe.bytes, binary: true, bytes: recipe.bytes.length },
          expected: { kind: 'edge-error', code: ErrorCode.BAD_FRAME },
        };
      case 'oversized':
        return text(
          JSON.stringify({
            type: 'CPP_THREAD_LIST',
            timestamp: 0,
            payload: { pad: 'x'.repeat(this.maxFrameBytes + recipe.extraBytes) },
          }),
        );
      case 'hard-oversized':
        return {
          frame: { data: 'x'.repeat(this.maxFrameBytes * 8 + 1), binary: false, bytes: this.maxFrameBytes * 8 + 1 },
          expected: { kind: 'close', code: 1009 },
        };
      case 'invalid-utf8':
        return {
          frame: { data: recipe.bytes, binary: false, bytes: recipe.bytes.length },
          expected: { kind: 'close', code: 1007 },
        };
    }
  }

  private text(data: string, messageLimitBytes: number): { frame: WireFrame; expected: Expectation } {
    const bytes = Buffer.byteLength(data);
    // What the server reads is the UTF-8 the socket carries, in which a lone surrogate has become U+FFFD.
    const received = Buffer.from(data, 'utf8').toString('utf8');
    const expected: Expectation =
      bytes > messageLimitBytes ? { kind: 'close', code: 1009 } : this.expectationOf(received, bytes);
    return { frame: { data, binary: false, bytes }, expected };
  }

  /** What the server's edge makes of a text frame: the protocol package's decoder is that edge. */
  private expectationOf(data: string, bytes: number): Expectation {
    if (bytes > this.maxFrameBytes) return { kind: 'edge-error', code: ErrorCode.FRAME_TOO_LARGE };
    const decoded = decodeClientFrame(data);
    if (!decoded.ok)
      return {
        kind: 'edge-error',
        code: decoded.code,
        refId: decoded.refId,
      };
    // No proof the fuzzer makes holds: a random signature, or a connection that has proven itself already.
    return decoded.frame.type === 'CPP_AUTH_PROOF' ? { kind: 'close', code: 4401 } : { kind: 'handled' };
  }

  private envelope(recipe: ValidRecipe, withId: boolean): Record<string, unknown> {
    return {
      type: recipe.type,
      timestamp: Date.now(),
      ...(withId ? { id: `fuzz-${++this.sequence}` } : {}),
      payload: this.payload(recipe),
    };
  }

  private payload(recipe: ValidRecipe): Record<string, unknown> {
    const optional = (name: string, value: unknown) => (value === undefined ? {} : { [name]: value });
    switch (recipe.type) {
      case 'CPP_THREAD_OPEN':
        return {
          ...optional('threadId', recipe.thread && this.thread(recipe.thread)),
          ...optional('patches', recipe.patches),
        };
      case 'CPP_THREAD_CLOSE':
      case 'CPP_SYNC_REQUEST':
        return { threadId: this.thread(recipe.thread) };
      case 'CPP_THREAD_LIST':
        return {};
      case 'CPP_PROMPT': {
        const threadId = this.thread(recipe.thread);
        return {
          activeThreadId: threadId,
          userPrompt: recipe.prompt,
          newNodeId: this.newNode(recipe.newNode),
          ...optional('parentNodeId', recipe.parent && this.node(recipe.parent, threadId)),
          ...optional('expectedVersion', recipe.expectedVersion),
        };
      }
      case 'CPP_PIVOT_INIT': {
        const threadId = this.thread(recipe.thread);
        return {
          activeThreadId: threadId,
          interruptedNodeId: this.node(recipe.interrupted, threadId),
          userPrompt: recipe.prompt,
          newBranchNodeId: this.newNode(recipe.newNode),
          ...optional('receivedContentLength', recipe.received),
          ...optional('expectedVersion', recipe.expectedVersion),
        };
      }
      case 'CPP_STREAM_STOP': {
        const threadId = this.thread(recipe.thread);
        return {
          activeThreadId: threadId,
          nodeId: this.node(recipe.node, threadId),
          ...optional('receivedContentLength', recipe.received),
        };
      }
      case 'CPP_ANCHOR_HEAD': {
        const threadId = this.thread(recipe.thread);
        return {
          activeThreadId: threadId,
          targetNodeId: this.node(recipe.target, threadId),
          ...optional('expectedVersion', recipe.expectedVersion),
        };
      }
      case 'CPP_AUTH_PROOF':
        return {
          did: 'did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp',
          nonce: recipe.nonce,
          signature: recipe.signature,
        };
    }
  }

  private thread(pick: Pick): string {
    return 'made' in pick
      ? pick.made
      : (this.pools.threadIds[pick.pool % Math.max(1, this.pools.threadIds.length)] ?? 'thread_none');
  }

  /**
   * A node seen in the server's frames; for a frame about `threadId`, half the time one of that thread's, so that
   * such frames reach the checks a thread makes on its own nodes (a pick among all the nodes seen would rarely
   * name one of the thread's: CPP_STREAM_STOP would almost never meet NOT_STREAMING).
   */
  private node(pick: Pick, threadId?: string): string {
    if ('made' in pick) return pick.made;
    const own =
      threadId !== undefined && pick.pool % 2 === 0
        ? this.pools.nodeIds.filter((nodeId) => this.pools.threadOfNode.get(nodeId) === threadId)
        : [];
    const choices = own.length > 0 ? own : this.pools.nodeIds;
    return choices[Math.floor(pick.pool / 2) % Math.max(1, choices.length)] ?? 'msg_none';
  }

  /** A new node id, mostly fresh; sometimes an existing one, for exact retries and CONFLICT. */
  private newNode(pick: Pick): string {
    return 'pool' in pick && pick.pool % 4 === 0 ? this.node(pick) : `msg_fuzz${++this.sequence}`;
  }
}

function mutate(frame: Record<string, unknown>, mutation: Mutation): string {
  const payload = frame.payload as Record<string, unknown>;
  const keys = Object.keys(payload);
  switch (mutation.kind) {
    case 'drop-field':
      if (keys.length > 0) delete payload[keys[mutation.index % keys.length]!];
      return JSON.stringify(frame);
    case 'set-field':
      payload[keys.length > 0 ? keys[mutation.index % keys.length]! : 'field'] = mutation.value;
      return JSON.stringify(frame);
    case 'add-field':
      payload[mutation.name] = mutation.value;
      return JSON.stringify(frame);
    case 'envelope':
      frame[mutation.field] = mutation.value;
      return JSON.stringify(frame);
    case 'retype':
      frame.type = mutation.type;
      return JSON.stringify(frame);
    case 'truncate': {
      const text = JSON.stringify(frame);
      return text.slice(0, mutation.at % text.length);
    }
    case 'splice': {
      const text = JSON.stringify(frame);
      const at = mutation.at % (text.length + 1);
      return text.slice(0, at) + mutation.text + text.slice(at);
    }
    case 'wrap':
      return JSON.stringify([frame]);
  }
}
