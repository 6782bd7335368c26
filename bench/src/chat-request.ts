import { request, type IncomingMessage } from 'node:http';

/** What every prompt of the gateway and models measures asks. */
export const PROMPT = 'What is a conversational pivot?';

/**
 * A streaming chat completion asked of the local model server, made as the CPP provider makes it (node:http, the
 * global keep-alive agent), so that a baseline that makes it pays what CPP pays for it. Resolves with the response,
 * unread.
 */
export function postChatCompletion(baseUrl: string): Promise<IncomingMessage> {
  const body = JSON.stringify({
    model: 'bench-model',
    messages: [{ role: 'user', content: PROMPT }],
    stream: true,
    stream_options: { include_usage: true },
  });
  return new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = request(`${baseUrl}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'content-length': Buffer.byteLength(body),
      },
    });
    outgoing.once('response', resolve).once('error', reject);
    outgoing.end(body);
  });
}
