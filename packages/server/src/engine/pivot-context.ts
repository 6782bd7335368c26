import type { Identity } from './identity.js';

/** What a pivot asks for: the fields of CPP_PIVOT_INIT. */
export interface PivotRequest {
  threadId: string;
  interruptedNodeId: string;
  userPrompt: string;
  newBranchNodeId: string;
  receivedContentLength: number | undefined;
  /** How much of the interrupted node's reasoning the client had shown. */
  receivedReasoningLength?: number | undefined;
  /** The model to answer the new prompt with; absent: the default. */
  model?: string;
  /** The models to answer the new prompt with side by side (docs/PROTOCOL.md §30), exclusive with `model`. */
  models?: string[];
  /** The ids of the files the new prompt carries (docs/PROTOCOL.md §27.4); absent: none. */
  attachments?: string[];
}

/** The two steps a pivot is made of, carried out by the thread's engine. */
export interface PivotSteps {
  abortActiveStream(): Promise<void>;
  spawnSiblingStream(): Promise<{ assistantNodeId: string }>;
}

/**
 * Given to `server.on('pivot', async (context) => …)`. The default pivot is exactly
 * `await context.abortActiveStream(); await context.spawnSiblingStream();`; a listener may do work between or
 * around the steps. Whatever the listeners leave undone is done once they settle, so the pivot always completes; a
 * listener that throws refuses it (the client gets the code of a thrown `CPPError`, else INTERNAL), and a stream it
 * had aborted is committed as `interrupted` (docs/PROTOCOL.md §11.6). Each step runs once, however often it is called.
 */
export class PivotContext implements PivotRequest {
  readonly threadId: string;
  readonly interruptedNodeId: string;
  readonly userPrompt: string;
  readonly newBranchNodeId: string;
  readonly receivedContentLength: number | undefined;
  readonly receivedReasoningLength: number | undefined;
  readonly model: string | undefined;
  readonly models: string[] | undefined;

  constructor(
    request: PivotRequest,
    /** Who asked for the pivot. */
    readonly identity: Identity,
    private readonly steps: PivotSteps,
  ) {
    this.threadId = request.threadId;
    this.interruptedNodeId = request.interruptedNodeId;
    this.userPrompt = request.userPrompt;
    this.newBranchNodeId = request.newBranchNodeId;
    this.receivedContentLength = request.receivedContentLength;
    this.receivedReasoningLength = request.receivedReasoningLength;
    this.model = request.model;
    this.models = request.models;
  }

  /** Spec §4 step 1: abort the model call of the interrupted node, if it still runs, and freeze its text at the cut. */
  abortActiveStream(): Promise<void> {
    return this.steps.abortActiveStream();
  }

  /** Spec §4 steps 2–4, in one transaction: commit the cut, insert the user's branch, start the new answer. */
  spawnSiblingStream(): Promise<{ assistantNodeId: string }> {
    return this.steps.spawnSiblingStream();
  }
}
