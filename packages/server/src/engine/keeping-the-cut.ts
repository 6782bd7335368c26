import type { ThreadContext } from './thread-context.js';

/**
 * Runs the rest of an operation that halts the thread's stream to replace it (a pivot, a regenerate). When it fails
 * before a commit kept the cut, the halted answer is committed alone, `interrupted` as it was cut: CPP_STREAM_HALTED
 * has already told every client where it ends, and nothing else would end it.
 */
export async function keepingTheCut(thread: ThreadContext, operation: () => Promise<void>): Promise<void> {
  try {
    await operation();
  } catch (error) {
    const state = thread.generation.state;
    if (state.name === 'halting') await thread.commitHalt(state.stream.nodeId, state.cut);
    throw error;
  }
}
