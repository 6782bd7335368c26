import type { ClientFrame } from '@promethea/cpp-protocol';

/** The client frames that change a thread, each run by the thread's engine in the thread's turn. */
export type ThreadFrame = Extract<
  ClientFrame,
  {
    type:
      | 'CPP_PROMPT'
      | 'CPP_PIVOT_INIT'
      | 'CPP_STREAM_STOP'
      | 'CPP_REGENERATE'
      | 'CPP_CONTINUE'
      | 'CPP_ANCHOR_HEAD'
      | 'CPP_BRANCH_DELETE'
      | 'CPP_THREAD_RENAME'
      | 'CPP_TOOL_APPROVAL'
      | 'CPP_TOOL_RESULT';
  }
>;

const THREAD_FRAME_TYPES: ReadonlySet<ClientFrame['type']> = new Set<ThreadFrame['type']>([
  'CPP_PROMPT',
  'CPP_PIVOT_INIT',
  'CPP_STREAM_STOP',
  'CPP_REGENERATE',
  'CPP_CONTINUE',
  'CPP_ANCHOR_HEAD',
  'CPP_BRANCH_DELETE',
  'CPP_THREAD_RENAME',
  'CPP_TOOL_APPROVAL',
  'CPP_TOOL_RESULT',
]);

export function isThreadFrame(frame: ClientFrame): frame is ThreadFrame {
  return THREAD_FRAME_TYPES.has(frame.type);
}

/** The thread a thread frame acts on. */
export function threadOf(frame: ThreadFrame): string {
  return frame.type === 'CPP_THREAD_RENAME' ? frame.payload.threadId : frame.payload.activeThreadId;
}
