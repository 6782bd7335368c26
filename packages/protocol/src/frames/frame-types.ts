import type { ClientFrameType } from './client-frames.js';
import type { ServerFrameType } from './server-frames.js';

// The frame types as plain lists, apart from their schemas: the browser client reads envelopes without zod.
// `satisfies` keeps every entry a real frame type; the codec tests check that no type is missing.

export const CLIENT_FRAME_TYPES = [
  'CPP_PIVOT_INIT',
  'CPP_ANCHOR_HEAD',
  'CPP_THREAD_OPEN',
  'CPP_THREAD_CLOSE',
  'CPP_PROMPT',
  'CPP_STREAM_STOP',
  'CPP_THREAD_LIST',
  'CPP_SYNC_REQUEST',
  'CPP_REGENERATE',
  'CPP_CONTINUE',
  'CPP_BRANCH_DELETE',
  'CPP_MODEL_LIST',
  'CPP_AUTH_PROOF',
  'CPP_THREAD_RENAME',
  'CPP_THREAD_DELETE',
  'CPP_THREAD_SEARCH',
  'CPP_THREAD_IMPORT',
  'CPP_ATTACHMENT_TICKET_REQUEST',
  'CPP_TOOL_APPROVAL',
  'CPP_MEMBER_ADD',
  'CPP_MEMBER_REMOVE',
  'CPP_MEMBER_LIST',
  'CPP_TOOL_RESULT',
  'CPP_INVITE_CREATE',
  'CPP_INVITE_LIST',
  'CPP_INVITE_REVOKE',
  'CPP_INVITE_ACCEPT',
] as const satisfies readonly ClientFrameType[];

export const SERVER_FRAME_TYPES = [
  'CPP_STREAM_HALTED',
  'CPP_SYNC_GRAPH',
  'CPP_GRAPH_PATCH',
  'CPP_STREAM_CHUNK',
  'CPP_STREAM_COMPLETED',
  'CPP_TOOL_CALL',
  'CPP_THREADS',
  'CPP_MODELS',
  'CPP_ERROR',
  'CPP_AUTH_CHALLENGE',
  'CPP_AUTH_ACCEPTED',
  'CPP_THREAD_DELETED',
  'CPP_SEARCH_RESULTS',
  'CPP_THREADS_IMPORTED',
  'CPP_THREAD_UPDATED',
  'CPP_ATTACHMENT_TICKET',
  'CPP_MEMBERS',
  'CPP_THREAD_REVOKED',
  'CPP_INVITE',
  'CPP_INVITES',
] as const satisfies readonly ServerFrameType[];
