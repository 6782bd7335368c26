import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { pushPacedChunks, type BaselineServer, type BaselineStreams } from './baseline-server.js';
import { SOCKETIO_CHUNK_EVENT, SOCKETIO_START_EVENT, type SocketIoStreamRequest } from './peer-protocols.js';

/**
 * The Socket.IO peer (the transport Open WebUI streams its answers over): a `socket.io` server with its defaults
 * that pushes, on a `stream` event, the very chunks a CPP stream carries on the same schedule, each as a `chunk`
 * event whose argument is CPP_STREAM_CHUNK's payload (an object, as Open WebUI emits its events).
 */
export async function startSocketIoServer(streams: BaselineStreams): Promise<BaselineServer> {
  const http = createServer();
  const io = new Server(http, { serveClient: false });
  io.on('connection', (socket) => {
    const controller = new AbortController();
    socket.on('disconnect', () => controller.abort());
    socket.on(SOCKETIO_START_EVENT, (target: SocketIoStreamRequest) => {
      void pushPacedChunks(streams, controller.signal, (delta, offset) =>
        socket.emit(SOCKETIO_CHUNK_EVENT, { threadId: target.threadId, nodeId: target.nodeId, offset, delta }),
      );
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    close: async () => {
      io.disconnectSockets(true);
      // Closes the HTTP server too.
      await io.close();
    },
  };
}
