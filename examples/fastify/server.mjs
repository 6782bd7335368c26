// CPP inside a Fastify application: Fastify upgrades the WebSocket (@fastify/websocket), CPPServer serves it.
import websocket from '@fastify/websocket';
import { CPP_SESSION_PATH, CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { CPPServer } from '@promethea/cpp-server';
import Fastify from 'fastify';

// noServer: CPPServer neither listens nor attaches; every connection comes through accept().
const cpp = new CPPServer({ noServer: true, allowedOrigins: ['self'] });

const app = Fastify();
await app.register(websocket, {
  // CPP needs its subprotocol selected in the 101 answer; accept() closes a WebSocket without it with 4400.
  options: { handleProtocols: (offered) => (offered.has(CPP_SUBPROTOCOL) ? CPP_SUBPROTOCOL : false) },
});
// The raw request carries what CPP checks as it would at its own upgrade: the Host and Origin headers, the
// X-Client-Sovereign-DID header or `did` parameter, and the address of the request's socket.
app.get(CPP_SESSION_PATH, { websocket: true }, (socket, request) => cpp.accept(socket, request.raw));
app.get('/', async () => 'a Fastify application that also speaks CPP');
// Fastify closes its WebSockets when it closes; CPP halts its answers and closes its own first.
app.addHook('preClose', () => cpp.close());

await cpp.ready;
const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '127.0.0.1' });
console.log(`CPP at ${address.replace(/^http/, 'ws')}${CPP_SESSION_PATH}`);
