import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export type Answer = (frame: { type: string; id?: string; payload: Record<string, unknown> }) => object | undefined;

/** A WebSocket server that accepts any upgrade and answers each frame as `answer` says: a server with a fault. */
export async function startFaultyServer(answer: Answer): Promise<{ url: string; close(): Promise<void> }> {
  const server = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    handleProtocols: (protocols) => [...protocols][0] ?? false,
  });
  server.on('connection', (socket) =>
    socket.on('message', (data) => {
      const reply = answer(JSON.parse(String(data)));
      if (reply) socket.send(JSON.stringify({ timestamp: Date.now(), ...reply }));
    }),
  );
  await once(server, 'listening');
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
