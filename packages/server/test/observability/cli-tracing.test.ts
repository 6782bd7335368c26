import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { chunksReceived, completion, openThread, pivot, prompt } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { runCli, type CliProcess } from './support/cli-process.js';

interface Export {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A stand-in OpenTelemetry collector: accepts every OTLP/HTTP export and keeps it. */
async function startCollector(): Promise<{ url: string; exports: Export[]; close(): Promise<void> }> {
  const exports: Export[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    exports.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) });
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exports,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let cli: CliProcess | undefined;
afterEach(async () => {
  await cli?.stop();
  cli = undefined;
});

describe('cpp-server tracing', () => {
  it('exports the spans of a pivot over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, flushed on shutdown', async () => {
    const collector = await startCollector();
    try {
      cli = await runCli(['--demo-delay-ms', '20'], {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_SERVICE_NAME: 'cpp-under-test',
      });
      const client = await RawClient.connect(cli.url);
      const { threadId } = await openThread(client);
      const first = await prompt(client, threadId, 'Tell me a story');
      await chunksReceived(client, first.assistantNodeId, 2);
      const branch = await pivot(client, threadId, first.assistantNodeId, 'A shorter one');
      await completion(client, threadId, branch.assistantNodeId);
      await client.close();
      await cli.stop();

      expect(cli.lines).toContainEqual(expect.stringMatching(/traces to otlp$/));
      expect(collector.exports.length).toBeGreaterThan(0);
      expect(
        collector.exports.every(
          (entry) => entry.path === '/v1/traces' && entry.headers['content-type'] === 'application/x-protobuf',
        ),
      ).toBe(true);
      // Span names and resource attributes are plain UTF-8 strings inside the protobuf.
      const exported = Buffer.concat(collector.exports.map((entry) => entry.body)).toString('latin1');
      for (const name of [
        'cpp.pivot',
        'cpp.pivot.abort',
        'cpp.pivot.commit',
        'cpp.pivot.insert',
        'cpp.pivot.spawn',
        'chat cpp-demo',
        'cpp-under-test',
      ]) {
        expect(exported).toContain(name);
      }
    } finally {
      await collector.close();
    }
  });

  it('is off without OTEL_* settings', async () => {
    cli = await runCli([]);
    // A round trip: the banner is whole, and the CLI handles SIGTERM, once the server answers.
    const client = await RawClient.connect(cli.url);
    await openThread(client);
    await client.close();
    await cli.stop();
    expect(cli.lines.find((line) => line.startsWith('  ops:'))).not.toContain('traces');
  });
});
