// A page as an AI SDK app would have it: useChat, with the CPP transport instead of an HTTP endpoint. The test
// drives it through `window.chat` (useChat's helpers, renewed on every render) and reads what it renders.
import { useChat, type UseChatHelpers } from '@ai-sdk/react';
import { CPPChatTransport, uiMessagesFromThread } from '@promethea/cpp-ai-sdk';
import { CPPClient, browserIdentity } from '@promethea/cpp-client';
import {
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  type UIMessage,
} from 'ai';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

declare global {
  interface Window {
    chat: UseChatHelpers<UIMessage>;
    client: CPPClient;
    uiMessagesFromThread: typeof uiMessagesFromThread;
    /** Each status the chat went through, in order, since the page loaded. */
    statuses: string[];
  }
}

const parameters = new URLSearchParams(location.search);
const threadId = parameters.get('thread')!;
const client = new CPPClient({ endpoint: parameters.get('endpoint')!, identity: browserIdentity() });
const transport = new CPPChatTransport({ client });
// After a reload, the thread's history is the chat's first messages, and an answer still streaming is resumed.
const history = uiMessagesFromThread(await client.openThread(threadId));
window.client = client;
window.uiMessagesFromThread = uiMessagesFromThread;

function Chat() {
  const chat = useChat({
    id: threadId,
    transport,
    messages: history,
    resume: true,
    // The demo agent's client tool, answered as an AI SDK app answers one (not awaited: useChat runs it in order).
    onToolCall: ({ toolCall }) => {
      if (toolCall.toolName === 'time_zone')
        void window.chat.addToolOutput({ tool: 'time_zone', toolCallId: toolCall.toolCallId, output: 'Europe/Paris' });
    },
    sendAutomaticallyWhen: (options) =>
      lastAssistantMessageIsCompleteWithToolCalls(options) ||
      lastAssistantMessageIsCompleteWithApprovalResponses(options),
  });
  window.chat = chat;
  window.statuses ??= [];
  if (window.statuses.at(-1) !== chat.status) window.statuses.push(chat.status);
  return createElement(
    'ol',
    null,
    chat.messages.map((message) =>
      createElement(
        'li',
        { key: message.id, 'data-role': message.role },
        message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
      ),
    ),
  );
}

createRoot(document.getElementById('root')!).render(createElement(Chat));
