import type { ClientFrame, ClientFrameType, MessageNode, ServerFrame, ServerFrameType } from '@promethea/cpp-protocol';

export const TIMESTAMP = 1781100000000;
export const THREAD_ID = 'thread_abc123';
/** The did:key of the Ed25519 key whose seed is 32 zero bytes (a test vector of the did:key specification). */
export const DID_KEY = 'did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp';
export const NONCE = 'q0Wc6mIuD2q8R3lWhB7o2kEwXk3r9yZ1n5Q4aT6uPzM';

const rootNode: MessageNode = {
  id: 'msg_01h8v0',
  parentId: null,
  childrenIds: ['msg_01h8v1'],
  role: 'user',
  content: 'Explain spiking neural networks.',
  attachments: [
    {
      id: 'att_01h8v0a',
      name: 'raster plot.png',
      mediaType: 'image/png',
      size: 48213,
      sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      width: 1280,
      height: 720,
    },
  ],
  status: 'completed',
  createdAt: TIMESTAMP,
  authorDid: 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH',
};

const answerNode: MessageNode = {
  id: 'msg_01h8v1',
  parentId: 'msg_01h8v0',
  childrenIds: [],
  role: 'assistant',
  content: 'Spiking Neural Networks are…',
  status: 'streaming',
  createdAt: TIMESTAMP,
  model: 'demo',
  usage: { inputTokens: 12, outputTokens: 7 },
};

/** One valid frame of every client type, with every optional field set. */
export const clientSamples: { [Type in ClientFrameType]: Extract<ClientFrame, { type: Type }> } = {
  CPP_PIVOT_INIT: {
    type: 'CPP_PIVOT_INIT',
    timestamp: TIMESTAMP,
    id: 'request-1',
    payload: {
      interruptedNodeId: 'msg_01h8v1',
      activeThreadId: THREAD_ID,
      userPrompt: "Wait, let's pivot and focus on the Rust implementation instead of Clojure.",
      newBranchNodeId: 'msg_01h8w',
      attachments: ['att_01h8w0a'],
      receivedContentLength: 12,
      expectedVersion: 3,
      model: 'fast',
    },
  },
  CPP_ANCHOR_HEAD: {
    type: 'CPP_ANCHOR_HEAD',
    timestamp: TIMESTAMP,
    id: 'request-2',
    payload: { activeThreadId: THREAD_ID, targetNodeId: 'msg_01h8v0', expectedVersion: 0 },
  },
  CPP_THREAD_OPEN: {
    type: 'CPP_THREAD_OPEN',
    timestamp: TIMESTAMP,
    id: 'request-3',
    payload: { threadId: THREAD_ID, patches: true },
  },
  CPP_THREAD_CLOSE: {
    type: 'CPP_THREAD_CLOSE',
    timestamp: TIMESTAMP,
    id: 'request-4',
    payload: { threadId: THREAD_ID },
  },
  CPP_PROMPT: {
    type: 'CPP_PROMPT',
    timestamp: TIMESTAMP,
    id: 'request-5',
    payload: {
      activeThreadId: THREAD_ID,
      userPrompt: 'Explain spiking neural networks.',
      newNodeId: 'msg_01h8v0',
      parentNodeId: 'msg_01h8v1',
      attachments: ['att_01h8v0a', 'att_01h8v0b'],
      expectedVersion: 2,
      model: 'deep',
    },
  },
  CPP_STREAM_STOP: {
    type: 'CPP_STREAM_STOP',
    timestamp: TIMESTAMP,
    id: 'request-6',
    payload: { activeThreadId: THREAD_ID, nodeId: 'msg_01h8v1', receivedContentLength: 0 },
  },
  CPP_THREAD_LIST: {
    type: 'CPP_THREAD_LIST',
    timestamp: TIMESTAMP,
    id: 'request-7',
    payload: { limit: 50, cursor: '1781100000005.thread_01J0ABCDEF', subscribe: true },
  },
  CPP_MODEL_LIST: { type: 'CPP_MODEL_LIST', timestamp: TIMESTAMP, id: 'request-10', payload: {} },
  CPP_TOOL_RESULT: {
    type: 'CPP_TOOL_RESULT',
    timestamp: TIMESTAMP,
    id: 'request-result',
    payload: {
      activeThreadId: THREAD_ID,
      nodeId: 'msg_01h8v1',
      toolCallId: 'call_01JZ8Q6H2T0C5M7P9R1T3V5X7Z',
      output: 'Europe/Paris',
    },
  },
  CPP_TOOL_APPROVAL: {
    type: 'CPP_TOOL_APPROVAL',
    timestamp: TIMESTAMP,
    id: 'request-approve',
    payload: {
      activeThreadId: THREAD_ID,
      nodeId: 'msg_01h8v1',
      toolCallId: 'call_01JZ8Q6H2T0C5M7P9R1T3V5X7Z',
      approved: false,
      reason: 'Not this file',
    },
  },
  CPP_SYNC_REQUEST: {
    type: 'CPP_SYNC_REQUEST',
    timestamp: TIMESTAMP,
    id: 'request-8',
    payload: { threadId: THREAD_ID },
  },
  CPP_REGENERATE: {
    type: 'CPP_REGENERATE',
    timestamp: TIMESTAMP,
    id: 'request-10',
    payload: {
      activeThreadId: THREAD_ID,
      userNodeId: 'msg_01h8v0',
      newNodeId: 'msg_01h8v2',
      receivedContentLength: 12,
      expectedVersion: 1,
    },
  },
  CPP_CONTINUE: {
    type: 'CPP_CONTINUE',
    timestamp: TIMESTAMP,
    id: 'request-continue',
    payload: { activeThreadId: THREAD_ID, nodeId: 'msg_01h8v1', expectedVersion: 2, model: 'demo-reasoning' },
  },
  CPP_BRANCH_DELETE: {
    type: 'CPP_BRANCH_DELETE',
    timestamp: TIMESTAMP,
    id: 'request-11',
    payload: { activeThreadId: THREAD_ID, nodeId: 'msg_01h8v1', expectedVersion: 1 },
  },
  CPP_THREAD_RENAME: {
    type: 'CPP_THREAD_RENAME',
    timestamp: TIMESTAMP,
    id: 'request-12',
    payload: { threadId: THREAD_ID, title: 'Spiking networks', expectedVersion: 3 },
  },
  CPP_THREAD_DELETE: {
    type: 'CPP_THREAD_DELETE',
    timestamp: TIMESTAMP,
    id: 'request-13',
    payload: { threadId: THREAD_ID, expectedVersion: 3 },
  },
  CPP_THREAD_SEARCH: {
    type: 'CPP_THREAD_SEARCH',
    timestamp: TIMESTAMP,
    id: 'request-14',
    payload: { query: 'spiking neur', limit: 10 },
  },
  CPP_THREAD_IMPORT: {
    type: 'CPP_THREAD_IMPORT',
    timestamp: TIMESTAMP,
    id: 'request-15',
    payload: { format: 'chatgpt', document: [{ title: 'Empty', mapping: {}, current_node: null }] },
  },
  CPP_ATTACHMENT_TICKET_REQUEST: {
    type: 'CPP_ATTACHMENT_TICKET_REQUEST',
    timestamp: TIMESTAMP,
    id: 'request-16',
    payload: {},
  },
  CPP_MEMBER_ADD: {
    type: 'CPP_MEMBER_ADD',
    timestamp: TIMESTAMP,
    id: 'request-17',
    payload: { threadId: THREAD_ID, did: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK', role: 'writer' },
  },
  CPP_MEMBER_REMOVE: {
    type: 'CPP_MEMBER_REMOVE',
    timestamp: TIMESTAMP,
    id: 'request-18',
    payload: { threadId: THREAD_ID, did: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK' },
  },
  CPP_INVITE_CREATE: {
    type: 'CPP_INVITE_CREATE',
    timestamp: TIMESTAMP,
    id: 'request-20',
    payload: { threadId: THREAD_ID, role: 'reader', expiresInMs: 86_400_000, maxUses: 5 },
  },
  CPP_INVITE_LIST: {
    type: 'CPP_INVITE_LIST',
    timestamp: TIMESTAMP,
    id: 'request-21',
    payload: { threadId: THREAD_ID },
  },
  CPP_INVITE_REVOKE: {
    type: 'CPP_INVITE_REVOKE',
    timestamp: TIMESTAMP,
    id: 'request-22',
    payload: { threadId: THREAD_ID, inviteId: 'inv_AAAAAAAAAAAAAAAAAAAAAA' },
  },
  CPP_INVITE_ACCEPT: {
    type: 'CPP_INVITE_ACCEPT',
    timestamp: TIMESTAMP,
    id: 'request-23',
    payload: { token: 'cppinv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  },
  CPP_TYPING: {
    type: 'CPP_TYPING',
    timestamp: TIMESTAMP,
    id: 'request-24',
    payload: { threadId: THREAD_ID, typing: true },
  },
  CPP_SHARE_LINK_CREATE: {
    type: 'CPP_SHARE_LINK_CREATE',
    timestamp: TIMESTAMP,
    id: 'request-25',
    payload: { threadId: THREAD_ID, scope: 'branch' },
  },
  CPP_SHARE_LINK_LIST: {
    type: 'CPP_SHARE_LINK_LIST',
    timestamp: TIMESTAMP,
    id: 'request-26',
    payload: { threadId: THREAD_ID },
  },
  CPP_SHARE_LINK_REVOKE: {
    type: 'CPP_SHARE_LINK_REVOKE',
    timestamp: TIMESTAMP,
    id: 'request-27',
    payload: { threadId: THREAD_ID, linkId: 'shr_AAAAAAAAAAAAAAAAAAAAAA' },
  },
  CPP_MEMBER_LIST: {
    type: 'CPP_MEMBER_LIST',
    timestamp: TIMESTAMP,
    id: 'request-19',
    payload: { threadId: THREAD_ID },
  },
  CPP_AUTH_PROOF: {
    type: 'CPP_AUTH_PROOF',
    timestamp: TIMESTAMP,
    id: 'request-9',
    payload: { did: DID_KEY, nonce: NONCE, signature: 'A'.repeat(86) },
  },
};

/** The seed spec's two client frames (§3.1), with its elided ids completed: they must decode unchanged. */
export const seedClientFrames = [
  {
    type: 'CPP_PIVOT_INIT',
    timestamp: 1781100000000,
    payload: {
      interruptedNodeId: 'msg_01h8v',
      activeThreadId: 'thread_abc123',
      userPrompt: "Wait, let's pivot and focus on the Rust implementation instead of Clojure.",
      newBranchNodeId: 'msg_01h8w',
    },
  },
  {
    type: 'CPP_ANCHOR_HEAD',
    timestamp: 1781100010000,
    payload: { activeThreadId: 'thread_abc123', targetNodeId: 'msg_01h8v1' },
  },
] as const;

/** One valid frame of every server type, with every optional field set. */
export const serverSamples: { [Type in ServerFrameType]: Extract<ServerFrame, { type: Type }> } = {
  CPP_STREAM_HALTED: {
    type: 'CPP_STREAM_HALTED',
    timestamp: TIMESTAMP,
    payload: {
      interruptedNodeId: 'msg_01h8v1',
      finalContentLength: 324,
      lastChunkReceived: 'We can see that the SNN LIF...',
      threadId: THREAD_ID,
      reason: 'pivot',
    },
  },
  CPP_SYNC_GRAPH: {
    type: 'CPP_SYNC_GRAPH',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      rootNodeId: rootNode.id,
      activeHeadMessageId: answerNode.id,
      nodes: { [rootNode.id]: rootNode, [answerNode.id]: answerNode },
      version: 1,
      title: 'Explain spiking neural networks.',
    },
  },
  CPP_GRAPH_PATCH: {
    type: 'CPP_GRAPH_PATCH',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      version: 2,
      rootNodeId: rootNode.id,
      activeHeadMessageId: answerNode.id,
      nodes: { [answerNode.id]: answerNode },
      title: 'Explain spiking neural networks.',
    },
  },
  CPP_STREAM_CHUNK: {
    type: 'CPP_STREAM_CHUNK',
    timestamp: TIMESTAMP,
    payload: { threadId: THREAD_ID, nodeId: answerNode.id, offset: 0, delta: 'Spiking' },
  },
  CPP_STREAM_COMPLETED: {
    type: 'CPP_STREAM_COMPLETED',
    timestamp: TIMESTAMP,
    payload: { threadId: THREAD_ID, nodeId: answerNode.id, finalContentLength: 28, finishReason: 'stop' },
  },
  CPP_TOOL_CALL: {
    type: 'CPP_TOOL_CALL',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      nodeId: answerNode.id,
      toolCall: {
        toolCallId: 'call_01JZ8Q6H2T0C5M7P9R1T3V5X7Z',
        toolName: 'count_to',
        step: 0,
        offset: 12,
        state: 'input-available',
        input: '{"to":5}',
        progress: { progress: 2, total: 5, message: 'counted 2 of 5' },
      },
    },
  },
  CPP_THREADS: {
    type: 'CPP_THREADS',
    timestamp: TIMESTAMP,
    payload: {
      threads: [
        {
          threadId: THREAD_ID,
          title: 'Explain spiking neural networks.',
          createdAt: TIMESTAMP,
          updatedAt: TIMESTAMP + 5,
          version: 1,
          nodeCount: 2,
        },
      ],
      nextCursor: null,
    },
  },
  CPP_MODELS: {
    type: 'CPP_MODELS',
    timestamp: TIMESTAMP,
    payload: {
      models: [
        { id: 'fast', label: 'GPT-4o mini', provider: 'openai-compatible', reasoning: false },
        { id: 'deep', label: 'DeepSeek R1', provider: 'openai-compatible', reasoning: true },
      ],
      defaultModel: 'fast',
    },
  },
  CPP_ERROR: {
    type: 'CPP_ERROR',
    timestamp: TIMESTAMP,
    payload: {
      code: 'PROVIDER_ERROR',
      message: 'the model provider failed',
      refId: 'request-5',
      refType: 'CPP_PROMPT',
      threadId: THREAD_ID,
      nodeId: answerNode.id,
    },
  },
  CPP_AUTH_CHALLENGE: {
    type: 'CPP_AUTH_CHALLENGE',
    timestamp: TIMESTAMP,
    payload: {
      nonce: NONCE,
      audience: 'wss://chat.example/v1/cpp/session',
      issuedAt: TIMESTAMP,
      expiresAt: TIMESTAMP + 30_000,
    },
  },
  CPP_AUTH_ACCEPTED: { type: 'CPP_AUTH_ACCEPTED', timestamp: TIMESTAMP, payload: { did: DID_KEY } },
  CPP_THREAD_DELETED: { type: 'CPP_THREAD_DELETED', timestamp: TIMESTAMP, payload: { threadId: THREAD_ID } },
  CPP_SEARCH_RESULTS: {
    type: 'CPP_SEARCH_RESULTS',
    timestamp: TIMESTAMP,
    payload: {
      query: 'spiking',
      hits: [
        {
          threadId: THREAD_ID,
          title: 'Explain spiking neural networks.',
          nodeId: null,
          snippet: 'Explain spiking neural networks.',
        },
        {
          threadId: THREAD_ID,
          title: 'Explain spiking neural networks.',
          nodeId: answerNode.id,
          snippet: 'Spiking neural networks are…',
        },
      ],
    },
  },
  CPP_THREADS_IMPORTED: {
    type: 'CPP_THREADS_IMPORTED',
    timestamp: TIMESTAMP,
    payload: {
      threads: [
        {
          threadId: THREAD_ID,
          title: 'Rivers',
          createdAt: TIMESTAMP,
          updatedAt: TIMESTAMP + 5,
          version: 1,
          nodeCount: 4,
        },
      ],
    },
  },
  CPP_THREAD_UPDATED: {
    type: 'CPP_THREAD_UPDATED',
    timestamp: TIMESTAMP,
    payload: {
      thread: {
        threadId: THREAD_ID,
        title: 'Explain spiking neural networks.',
        createdAt: TIMESTAMP,
        updatedAt: TIMESTAMP + 9,
        version: 2,
        nodeCount: 2,
        role: 'writer',
      },
    },
  },
  CPP_ATTACHMENT_TICKET: {
    type: 'CPP_ATTACHMENT_TICKET',
    timestamp: TIMESTAMP,
    payload: {
      ticket: 'v1.eyJkaWQiOiJkaWQ6a2V5Ono2TWsiLCJ2ZXJpZmllZCI6dHJ1ZSwiZXhwIjoxNzgxMTAzNjAwMDAwfQ.c2lnbmF0dXJl',
      expiresAt: TIMESTAMP + 3_600_000,
      uploadPath: '/v1/cpp/attachments',
      maxBytes: 20_971_520,
      maxPerPrompt: 10,
      mediaTypes: ['image/png', 'image/jpeg', 'image/webp', 'image/gif', 'application/pdf', 'text/plain'],
    },
  },
  CPP_INVITE: {
    type: 'CPP_INVITE',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      token: 'cppinv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      invite: {
        inviteId: 'inv_AAAAAAAAAAAAAAAAAAAAAA',
        role: 'reader',
        expiresAt: TIMESTAMP + 86_400_000,
        maxUses: 5,
        uses: 0,
      },
    },
  },
  CPP_INVITES: {
    type: 'CPP_INVITES',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      invites: [
        { inviteId: 'inv_AAAAAAAAAAAAAAAAAAAAAA', role: 'writer', expiresAt: TIMESTAMP + 9, maxUses: 1, uses: 0 },
      ],
    },
  },
  CPP_MEMBERS: {
    type: 'CPP_MEMBERS',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      ownerDid: 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH',
      members: [{ did: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK', role: 'reader' }],
    },
  },
  CPP_SHARE_LINK: {
    type: 'CPP_SHARE_LINK',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      token: 'cppshr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      path: '/share/cppshr_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      link: { linkId: 'shr_AAAAAAAAAAAAAAAAAAAAAA', scope: 'tree', createdAt: TIMESTAMP },
    },
  },
  CPP_SHARE_LINKS: {
    type: 'CPP_SHARE_LINKS',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      links: [{ linkId: 'shr_AAAAAAAAAAAAAAAAAAAAAA', scope: 'branch', createdAt: TIMESTAMP }],
    },
  },
  CPP_PRESENCE: {
    type: 'CPP_PRESENCE',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      present: [
        { did: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK', typing: true },
        { did: 'did:key:z6MkpTHR8VNsBxYAAWHut2Geadd9jSwuBV8xRoAnwWsdvktH', typing: false },
      ],
    },
  },
  CPP_THREAD_REVOKED: {
    type: 'CPP_THREAD_REVOKED',
    timestamp: TIMESTAMP,
    payload: {
      threadId: THREAD_ID,
      did: 'did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK',
      reason: 'removed',
    },
  },
};

/** The empty thread as a CPP_SYNC_GRAPH describes it before the first prompt. */
export const emptySyncSample: ServerFrame = {
  type: 'CPP_SYNC_GRAPH',
  timestamp: TIMESTAMP,
  payload: { threadId: THREAD_ID, rootNodeId: null, activeHeadMessageId: null, nodes: {}, version: 0, title: '' },
};

/**
 * A deep copy of a sample with one change applied, for building invalid variants. The copy is typed loosely on
 * purpose: the edits write values the frame types forbid.
 */
export function variant<Frame>(frame: Frame, edit: (copy: Record<string, any>) => void): Record<string, unknown> {
  const copy = structuredClone(frame) as Record<string, any>;
  edit(copy);
  return copy;
}
