export { useCPP, type CPP, type ConnectionState, type UseCPPOptions } from './use-cpp.js';
export { useCPPState } from './use-cpp-state.js';
export { useThreads, type ThreadsOptions, type ThreadsState } from './use-threads.js';
export { useThreadSearch, type ThreadSearch, type ThreadSearchOptions } from './use-thread-search.js';
export { useBranch, type Branch } from './use-branch.js';
export { useAttachmentUrl } from './use-attachment-url.js';
export { branchTip, currentBranch, sideBySideOf, streamingNode, type BranchEntry } from './branch.js';
export { snapshotGraph } from './graph-snapshot.js';
export type { ConnectionStatus, CPPState } from './cpp-state.js';
export { useToolCalls, type ToolCallEntry, type ToolCalls } from './use-tool-calls.js';
export {
  useInvites,
  useMembers,
  usePresence,
  useShareLinks,
  type ShareLinksState,
  type InvitesState,
  type Members,
  type MembersState,
} from './use-sharing.js';
