export { CPPChatTransport, type CPPChatTransportOptions } from './cpp-chat-transport.js';
export { uiMessagesFromThread } from './ui-messages.js';
