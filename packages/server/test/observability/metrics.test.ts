import { ErrorCode } from '@promethea/cpp-protocol';
import { MemoryStore } from '@promethea/cpp-server';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { completion, expectError, listThreads, openThread, pivot, prompt } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { startServer, useServer } from '../support/start-server.js';
import { startStreamingThread } from '../support/streaming-thread.js';
import { scrape } from './support/scrape.js';

const fixture = useServer();
const SCRIPTED = { provider: 'scripted', model: 'scripted-model' };

describe('GET /metrics', () => {
  it('counts a pivot over a real WebSocket: its halt latency and steps, frames by type, generations, store operations', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' wor', 'ld', ' and', ' more'], 3);
    const before = await scrape(fixture.server.port);
    expect(before.value('cpp_generations_active')).toBe(1);
    expect(before.value('cpp_pivot_halt_seconds_count')).toBe(0);

    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Rust instead');
    await completion(setup.client, setup.threadId, branch.assistantNodeId);
    await listThreads(setup.client);
    const after = await scrape(fixture.server.port);

    expect(after.value('cpp_pivot_halt_seconds_count')).toBe(1);
    for (const step of ['abort', 'commit', 'insert', 'spawn'])
      expect(after.value('cpp_pivot_step_seconds_count', { step })).toBe(1);
    expect(after.value('cpp_frames_received_total', { type: 'CPP_THREAD_OPEN' })).toBe(1);
    expect(after.value('cpp_frames_received_total', { type: 'CPP_PROMPT' })).toBe(1);
    expect(after.value('cpp_frames_received_total', { type: 'CPP_PIVOT_INIT' })).toBe(1);
    expect(after.value('cpp_frames_sent_total', { type: 'CPP_STREAM_HALTED' })).toBe(1);
    expect(after.value('cpp_frames_sent_total', { type: 'CPP_STREAM_CHUNK' })).toBe(5);
    expect(after.value('cpp_frames_sent_total', { type: 'CPP_STREAM_COMPLETED' })).toBe(1);
    expect(after.value('cpp_frames_sent_total', { type: 'CPP_THREADS' })).toBe(1);
    expect(after.value('cpp_generations_total', { ...SCRIPTED, outcome: 'halted' })).toBe(1);
    expect(after.value('cpp_generations_total', { ...SCRIPTED, outcome: 'completed' })).toBe(1);
    expect(after.value('cpp_generations_active')).toBe(0);
    expect(after.value('cpp_provider_first_token_seconds_count', SCRIPTED)).toBe(2);
    expect(after.value('cpp_provider_tokens_per_second_count', SCRIPTED)).toBe(1);
    // Thread open, prompt, pivot splice, completion.
    expect(after.value('cpp_store_operation_seconds_count', { operation: 'commit', result: 'ok' })).toBe(3);
    expect(after.value('cpp_store_operation_seconds_count', { operation: 'listThreads', result: 'ok' })).toBe(1);
    expect(after.value('cpp_connections_open')).toBe(1);
    expect(after.value('cpp_threads_open')).toBe(1);
    expect(after.has('cpp_websocket_buffered_bytes')).toBe(true);
  });

  it('counts errors by code, after a bad frame and a provider failure', async () => {
    const model = new ScriptedModel({ chunks: ['Partial'], ending: new Error('upstream broke') }, { gated: false });
    await fixture.start({ model });
    const client = await fixture.connect();
    client.sendRaw('this is not JSON');
    await expectError(client, ErrorCode.BAD_FRAME);
    client.send('CPP_SYNC_REQUEST', { threadId: 'thread_unknown' });
    await expectError(client, ErrorCode.NOT_FOUND);
    const { threadId } = await openThread(client);
    await prompt(client, threadId, 'Hello');
    await expectError(client, ErrorCode.PROVIDER_ERROR);

    const metrics = await scrape(fixture.server.port);
    expect(metrics.value('cpp_errors_total', { code: 'BAD_FRAME' })).toBe(1);
    expect(metrics.value('cpp_errors_total', { code: 'NOT_FOUND' })).toBe(1);
    expect(metrics.value('cpp_errors_total', { code: 'PROVIDER_ERROR' })).toBe(1);
    expect(metrics.value('cpp_generations_total', { ...SCRIPTED, outcome: 'failed' })).toBe(1);
    expect(metrics.value('cpp_provider_tokens_per_second_count')).toBe(0);
  });

  it('serves the process metrics beside the server’s own, the event-loop delay among them', async () => {
    await fixture.start();
    const metrics = await scrape(fixture.server.port);
    expect(metrics.has('nodejs_eventloop_lag_p99_seconds')).toBe(true);
    expect(metrics.has('process_resident_memory_bytes')).toBe(true);
    expect(metrics.value('cpp_connections_open')).toBe(0);
  });

  it('puts the cpp_* series in a registry of the application’s, and serves that registry', async () => {
    const registry = new Registry();
    await fixture.start({ metrics: registry });
    const client = await fixture.connect();
    await openThread(client);
    expect(fixture.server.metricsRegistry).toBe(registry);
    const metrics = await scrape(fixture.server.port);
    expect(metrics.value('cpp_frames_received_total', { type: 'CPP_THREAD_OPEN' })).toBe(1);
    expect(metrics.has('nodejs_eventloop_lag_p99_seconds')).toBe(false);
    expect(await registry.metrics()).toContain('cpp_frames_received_total{type="CPP_THREAD_OPEN"} 1');
  });

  it('is not served when metrics are turned off', async () => {
    const server = await fixture.start({ metrics: false });
    expect(server.metricsRegistry).toBeUndefined();
    expect((await fetch(`http://127.0.0.1:${server.port}/metrics`)).status).toBe(404);
  });

  it('shows the bytes waiting for a client that does not read', async () => {
    const chunk = 'x'.repeat(100_000);
    const model = new ScriptedModel({ chunks: Array.from({ length: 200 }, () => chunk) });
    await fixture.start({ model });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    await prompt(client, threadId, 'Write a lot');
    client.socket.pause();
    (await model.call(0)).releaseAll();
    // 20 MB is more than the kernel's socket buffers hold: the rest waits in the server.
    const buffered = await eventually(async () => {
      const bytes = (await scrape(fixture.server.port)).value('cpp_websocket_buffered_bytes');
      return bytes > 0 ? bytes : undefined;
    }, 'bytes wait for the client that does not read');
    client.socket.resume();
    expect(buffered).toBeGreaterThan(0);
  });

  it('keeps two servers in one process apart', async () => {
    await fixture.start();
    const client = await fixture.connect();
    await openThread(client);
    const other = await startServer();
    try {
      expect((await scrape(other.port)).value('cpp_frames_received_total')).toBe(0);
      expect((await scrape(fixture.server.port)).value('cpp_frames_received_total')).toBe(1);
    } finally {
      await other.close();
    }
  });
});

describe('GET /readyz', () => {
  it('is ready when the server is started and its store answers', async () => {
    const server = await fixture.start();
    const response = await fetch(`http://127.0.0.1:${server.port}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready', checks: { server: 'ok', store: 'ok' } });
  });

  it('is unavailable, without saying why to the prober, when the store does not answer', async () => {
    const store = new MemoryStore();
    const server = await fixture.start({ store });
    await store.close();
    const response = await fetch(`http://127.0.0.1:${server.port}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: 'unavailable', checks: { server: 'ok', store: 'failed' } });
    expect((await fetch(`http://127.0.0.1:${server.port}/healthz`)).status).toBe(200);
  });

  it('does not count its probes as store operations', async () => {
    const server = await fixture.start();
    await fetch(`http://127.0.0.1:${server.port}/readyz`);
    expect(
      (await scrape(server.port)).value('cpp_store_operation_seconds_count', { operation: 'findNodeThread' }),
    ).toBe(0);
  });
});
