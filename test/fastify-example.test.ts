import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { CPPClient } from '@promethea/cpp-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/local-port.js';

// examples/fastify as written, on a free port: CPP inside a Fastify application. Runs the built packages.
const root = fileURLToPath(new URL('..', import.meta.url));
let port: number;
let server: ReturnType<typeof spawn>;
let output = '';

beforeAll(async () => {
  port = await freePort();
  server = spawn(process.execPath, ['examples/fastify/server.mjs'], {
    cwd: root,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stderr?.on('data', (data: Buffer) => (output += data.toString()));
  const listening = new Promise<void>((resolve) =>
    server.stdout?.on('data', (data: Buffer) => {
      output += data.toString();
      if (output.includes('CPP at ')) resolve();
    }),
  );
  const exited = once(server, 'exit').then(() => Promise.reject(new Error(`the example exited: ${output}`)));
  // Its exit once the tests are done is no failure.
  exited.catch(() => undefined);
  await Promise.race([listening, exited]);
});

afterAll(() => {
  server.kill('SIGKILL');
});

describe('examples/fastify', () => {
  it("serves CPP next to the application's own routes", async () => {
    expect(output).toContain(`CPP at ws://127.0.0.1:${port}/v1/cpp/session`);
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('a Fastify application that also speaks CPP');
    const client = new CPPClient({ endpoint: `ws://127.0.0.1:${port}/v1/cpp/session`, did: 'did:web:fastify.example' });
    await client.openThread();
    const answer = await client.prompt({ userPrompt: 'Hello from Fastify' });
    expect(answer.status).toBe('completed');
    await client.close();
  });
});
