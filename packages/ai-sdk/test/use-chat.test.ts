import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DemoProvider, DemoToolsProvider, demoTools, type CPPServer } from '@promethea/cpp-server';
import { newThreadId, type ThreadGraph, type ToolCall } from '@promethea/cpp-protocol';
import type { Browser, Page } from 'playwright-core';
import { build } from 'vite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sharedChromium } from '../../../test/support/chromium.js';
import { INTERRUPTED_TEXT } from '../src/tool-parts.js';
import { startServer } from '../../server/test/support/start-server.js';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** The test page (test/page) built by Vite as an app would build it, against the packages' sources. */
async function buildPage(outDir: string): Promise<void> {
  await build({
    configFile: false,
    logLevel: 'error', // swr's "use client" directive is a warning of no consequence here
    root: source('./page'),
    resolve: {
      alias: {
        '@promethea/cpp-ai-sdk': source('../src/index.ts'),
        '@promethea/cpp-client': source('../../client/src/browser.ts'),
        '@promethea/cpp-protocol': source('../../protocol/src/index.ts'),
      },
    },
    build: { outDir, emptyOutDir: true, target: 'esnext', minify: false },
  });
}

function serveFolder(folder: string): Promise<Server> {
  const types: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript' };
  const server = createServer(async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://page').pathname;
    try {
      const body = await readFile(join(folder, path === '/' ? 'index.html' : path.slice(1)));
      response
        .writeHead(200, { 'content-type': types[extname(path) || '.html'] ?? 'application/octet-stream' })
        .end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

interface ShownMessage {
  id: string;
  role: string;
  text: string;
  /** The message's reasoning parts, joined. */
  reasoning: string;
  /** Its parts' types, in order. */
  parts: string[];
}

describe('useChat (@ai-sdk/react) over CPPChatTransport, in Chromium, against a CPP server', () => {
  let browser: Browser;
  let folder: string;
  let site: Server;
  let server: CPPServer;
  /** A server whose answers are short, for the tests that only wait for an answer to end. */
  let shortServer: CPPServer;
  /** A server whose model reasons before it answers (the demo model's reasoning mode). */
  let reasoningServer: CPPServer;
  /** A server whose model is the demo's agent, with the demo's tools (a fast clock, a count of 5 × 150 ms). */
  let toolServer: CPPServer;
  let page: Page;
  let threadId: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'cpp-ai-sdk-page-'));
    [browser] = await Promise.all([sharedChromium(), buildPage(folder)]);
    site = await serveFolder(folder);
    // Slow enough that the test can act while an answer streams (200 words, 15 ms each).
    server = await startServer({ model: new DemoProvider({ delayMs: 15, words: 200 }), auth: 'did-key' });
    shortServer = await startServer({ model: new DemoProvider({ delayMs: 15, words: 30 }), auth: 'did-key' });
    reasoningServer = await startServer({
      model: new DemoProvider({ delayMs: 15, words: 30, reasoningWords: 120 }),
      auth: 'did-key',
    });
    toolServer = await startServer({
      models: [{ provider: new DemoToolsProvider({ delayMs: 5 }) }],
      tools: demoTools({ now: () => Date.UTC(2026, 11, 5), countDelayMs: 150 }),
      auth: 'did-key',
    });
  });
  afterAll(async () => {
    await Promise.all([
      server?.close(),
      toolServer?.close(),
      shortServer?.close(),
      reasoningServer?.close(),
      new Promise((resolve) => site?.close(resolve)),
    ]);
    if (folder) await rm(folder, { recursive: true, force: true });
  });
  afterEach(() => page?.context().close());

  async function openChat(cppServer = server): Promise<void> {
    threadId = newThreadId();
    const context = await browser.newContext();
    page = await context.newPage();
    const port = (site.address() as AddressInfo).port;
    await page.goto(`http://127.0.0.1:${port}/?thread=${threadId}&endpoint=${encodeURIComponent(cppServer.url)}`);
    await page.waitForFunction(() => window.chat !== undefined);
  }

  const messages = () =>
    page.evaluate(() =>
      window.chat.messages.map((message) => ({
        id: message.id,
        role: message.role,
        text: message.parts.map((part) => (part.type === 'text' ? part.text : '')).join(''),
        reasoning: message.parts.map((part) => (part.type === 'reasoning' ? part.text : '')).join(''),
        parts: message.parts.map((part) => part.type),
      })),
    );
  /**
   * Waits until the chat shows `count` messages, is ready, and its last message is an answer that has ended in the
   * thread with exactly the text the page shows. (`ready` alone can come early: an answer cut by a pivot ends while
   * the next streams, and a reloaded page is ready before it resumes.)
   */
  const waitForSettledAnswer = (count: number) =>
    page.waitForFunction(
      ({ id, count }) => {
        const last = window.chat.messages.at(-1);
        const node = last && window.client.graph(id)?.nodes[last.id];
        const text = last?.parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
        return (
          window.chat.messages.length === count &&
          window.chat.status === 'ready' &&
          node?.status !== 'streaming' &&
          node?.content === text
        );
      },
      { id: threadId, count },
    );
  /** Waits until the last message is an answer with at least `length` characters shown. */
  const waitForAnswerText = (length: number) =>
    page.waitForFunction((wanted) => {
      const last = window.chat.messages.at(-1);
      return (
        last?.role === 'assistant' && last.parts.some((part) => part.type === 'text' && part.text.length >= wanted)
      );
    }, length);
  /** The thread as the CPP server has it, through the page's own client. */
  const thread = () => page.evaluate((id) => window.client.graph(id) as ThreadGraph, threadId);
  const send = (text: string) => page.evaluate((prompt) => void window.chat.sendMessage({ text: prompt }), text);

  it('streams an answer as a message whose id is its CPP node, and ends ready', async () => {
    await openChat(shortServer);
    await send('Explain spiking neural networks.');
    await waitForSettledAnswer(2);
    const [prompt, answer] = (await messages()) as [ShownMessage, ShownMessage];
    const graph = await thread();
    expect(prompt).toMatchObject({ role: 'user', text: 'Explain spiking neural networks.' });
    expect(graph.nodes[answer.id]).toMatchObject({ role: 'assistant', status: 'completed', content: answer.text });
  });

  it('pivots when a message is sent while an answer streams, cutting it where the page had shown it', async () => {
    await openChat();
    await send('Explain spiking neural networks.');
    await waitForAnswerText(40);
    await send('Let us pivot to Rust instead.');
    await waitForSettledAnswer(4);
    const [, first, pivot, second] = (await messages()) as ShownMessage[] as [
      ShownMessage,
      ShownMessage,
      ShownMessage,
      ShownMessage,
    ];
    const graph = await thread();
    const interrupted = graph.nodes[first.id]!;
    expect(interrupted).toMatchObject({ status: 'interrupted', content: first.text });
    expect(first.text.length).toBeGreaterThanOrEqual(40);
    const pivotNode = graph.nodes[interrupted.childrenIds[0]!]!;
    expect(pivotNode).toMatchObject({ role: 'user', content: 'Let us pivot to Rust instead.' });
    expect(pivot.text).toBe('Let us pivot to Rust instead.');
    expect(graph.nodes[second.id]).toMatchObject({ parentId: pivotNode.id, status: 'completed', content: second.text });
  });

  it('regenerates with CPP regenerate: a new answer beside the first, which stays in the tree', async () => {
    await openChat(shortServer);
    await send('Explain spiking neural networks.');
    await waitForSettledAnswer(2);
    const [, first] = (await messages()) as [ShownMessage, ShownMessage];
    await page.evaluate(() => void window.chat.regenerate());
    await page.waitForFunction((firstId) => window.chat.messages.at(-1)?.id !== firstId, first.id);
    await waitForSettledAnswer(2);
    const shown = await messages();
    const graph = await thread();
    expect(shown).toHaveLength(2);
    const second = shown[1]!;
    expect(graph.nodes[second.id]).toMatchObject({ role: 'assistant', status: 'completed', content: second.text });
    expect(graph.nodes[graph.nodes[first.id]!.parentId!]!.childrenIds).toEqual([first.id, second.id]);
  });

  it('stops the answer at what the page had shown; the partial text stays', async () => {
    await openChat();
    await send('Explain spiking neural networks.');
    await waitForAnswerText(20);
    await page.evaluate(() => window.chat.stop());
    await waitForSettledAnswer(2);
    const [, answer] = (await messages()) as [ShownMessage, ShownMessage];
    const node = (await thread()).nodes[answer.id]!;
    expect(node).toMatchObject({ status: 'interrupted', content: answer.text });
    expect(node.content.length).toBeGreaterThanOrEqual(20);
  });

  it('resumes the answer still streaming after a reload, from the thread', async () => {
    await openChat();
    await send('Explain spiking neural networks.');
    await waitForAnswerText(20);
    await page.reload();
    await page.waitForFunction(() => window.chat !== undefined);
    await waitForSettledAnswer(2);
    const [prompt, answer] = (await messages()) as [ShownMessage, ShownMessage];
    const graph = await thread();
    expect(prompt.text).toBe('Explain spiking neural networks.');
    expect(graph.nodes[answer.id]).toMatchObject({ status: 'completed', content: answer.text });
    expect(answer.text.split(' ').length).toBeGreaterThan(100);
    // Streamed after the reload, not found complete: the reloaded page's chat went from ready through streaming.
    expect(await page.evaluate(() => window.statuses)).toEqual(['ready', 'submitted', 'streaming', 'ready']);
  });

  it("streams a reasoning model's reasoning as a reasoning part before the text", async () => {
    await openChat(reasoningServer);
    await send('Explain spiking neural networks.');
    await waitForSettledAnswer(2);
    const [, answer] = (await messages()) as [ShownMessage, ShownMessage];
    const node = (await thread()).nodes[answer.id]!;
    expect(answer.parts).toEqual(['reasoning', 'text']);
    expect(node.reasoning!.split(' ').length).toBe(120);
    expect(answer).toMatchObject({ reasoning: node.reasoning, text: node.content });
  });

  it('pivots while the model reasons, keeping the reasoning the page had shown and no answer', async () => {
    await openChat(reasoningServer);
    await send('Explain spiking neural networks.');
    await page.waitForFunction(() => {
      const last = window.chat.messages.at(-1);
      return (
        last?.role === 'assistant' && last.parts.some((part) => part.type === 'reasoning' && part.text.length >= 40)
      );
    });
    await send('Let us pivot to Rust instead.');
    await waitForSettledAnswer(4);
    const [, first, , second] = (await messages()) as [ShownMessage, ShownMessage, ShownMessage, ShownMessage];
    const graph = await thread();
    expect(graph.nodes[first.id]).toMatchObject({ status: 'interrupted', content: '', reasoning: first.reasoning });
    expect(first.text).toBe('');
    expect(first.reasoning.length).toBeGreaterThanOrEqual(40);
    expect(graph.nodes[second.id]).toMatchObject({
      status: 'completed',
      content: second.text,
      reasoning: second.reasoning,
    });
  });

  /** The last message's tool parts, as useChat holds them. */
  const toolParts = () =>
    page.evaluate(() =>
      (window.chat.messages.at(-1)?.parts ?? []).flatMap((part) =>
        part.type.startsWith('tool-') ? [JSON.parse(JSON.stringify(part)) as Record<string, unknown>] : [],
      ),
    );
  /** Waits until the last message has the call of `toolName` in `state`. */
  const waitForToolPart = (toolName: string, state: string) =>
    page.waitForFunction(
      ({ type, state }) =>
        window.chat.messages
          .at(-1)
          ?.parts.some((part) => part.type === type && 'state' in part && part.state === state),
      { type: `tool-${toolName}`, state },
    );
  const callsOf = async (nodeId: string) => (await thread()).nodes[nodeId]!.toolCalls as ToolCall[];

  it("shows the server's tool calls as tool parts between the text, each model call a step", async () => {
    await openChat(toolServer);
    await send('What time is it? Then count.');
    await waitForSettledAnswer(2);
    const [, answer] = (await messages()) as [ShownMessage, ShownMessage];
    expect(answer.parts).toEqual(['text', 'tool-clock', 'step-start', 'text', 'tool-count_to', 'step-start', 'text']);
    const [clock, count] = await callsOf(answer.id);
    expect(await toolParts()).toEqual([
      {
        type: 'tool-clock',
        toolCallId: clock!.toolCallId,
        state: 'output-available',
        input: {},
        output: '2026-12-05T00:00:00.000Z',
        providerExecuted: true,
      },
      {
        type: 'tool-count_to',
        toolCallId: count!.toolCallId,
        state: 'output-available',
        input: { to: 5 },
        output: '1 2 3 4 5',
        providerExecuted: true,
      },
    ]);
    expect(answer.text).toContain('I counted 1 2 3 4 5.');
    // Built from the thread after a reload, the message is the one streamed.
    const rebuilt = await page.evaluate(
      ({ id, nodeId }) =>
        JSON.parse(JSON.stringify(window.uiMessagesFromThread(window.client.graph(id)!).find((m) => m.id === nodeId))),
      { id: threadId, nodeId: answer.id },
    );
    const streamed = await page.evaluate(() => JSON.parse(JSON.stringify(window.chat.messages.at(-1))));
    expect(rebuilt).toEqual({ ...streamed, parts: streamed.parts.map(withoutTextState) });
  });

  it('answers a client tool through onToolCall and addToolOutput; the answer goes on with it', async () => {
    await openChat(toolServer);
    await send('What is my time zone?');
    await waitForSettledAnswer(2);
    const [, answer] = (await messages()) as [ShownMessage, ShownMessage];
    const [call] = await callsOf(answer.id);
    expect(call).toMatchObject({
      toolName: 'time_zone',
      runsOn: 'client',
      state: 'output-available',
      output: 'Europe/Paris',
    });
    expect(answer.parts).toEqual(['text', 'tool-time_zone', 'step-start', 'text']);
    expect(answer.text).toContain('Your time zone is Europe/Paris.');
    expect((await toolParts())[0]).toMatchObject({ state: 'output-available', output: 'Europe/Paris' });
    // The first stream finished while the server waited for the page; the page sent the output back.
    expect(await page.evaluate(() => window.statuses)).toEqual([
      'ready',
      'submitted',
      'streaming',
      'ready',
      'submitted',
      'streaming',
      'ready',
    ]);
  });

  it('asks for approval as approval-requested; addToolApprovalResponse denies or approves the call', async () => {
    await openChat(toolServer);
    await send('Keep a note: buy milk');
    await waitForToolPart('save_note', 'approval-requested');
    const [asked] = await toolParts();
    expect(asked).toMatchObject({ state: 'approval-requested', input: { text: 'Keep a note: buy milk' } });
    await page.evaluate(
      (id) => void window.chat.addToolApprovalResponse({ id, approved: false, reason: 'not today' }),
      (asked!.approval as { id: string }).id,
    );
    await waitForSettledAnswer(2);
    const [, denied] = (await messages()) as [ShownMessage, ShownMessage];
    expect((await callsOf(denied.id))[0]).toMatchObject({
      state: 'output-denied',
      approval: { approved: false, reason: 'not today' },
    });
    expect((await toolParts())[0]).toMatchObject({ state: 'output-denied' });
    expect(denied.text).toContain('You did not approve it, so I kept nothing.');

    await send('Keep a note: buy bread');
    await waitForToolPart('save_note', 'approval-requested');
    const [again] = await toolParts();
    await page.evaluate(
      (id) => void window.chat.addToolApprovalResponse({ id, approved: true }),
      (again!.approval as { id: string }).id,
    );
    await waitForSettledAnswer(4);
    const approved = (await messages()).at(-1)!;
    expect((await callsOf(approved.id))[0]).toMatchObject({ state: 'output-available', approval: { approved: true } });
    expect((await toolParts())[0]).toMatchObject({ state: 'output-available', output: 'Saved note 1.' });
    expect(approved.text).toContain('Saved note 1.');
  });

  it('pivots while a server tool runs: the call ends as an output-error that says it was interrupted', async () => {
    await openChat(toolServer);
    await send('What time is it? Then count.');
    await waitForToolPart('count_to', 'input-available');
    await send('Let us pivot to Rust instead.');
    await waitForSettledAnswer(4);
    const [, first] = (await messages()) as [ShownMessage, ShownMessage];
    const [, count] = await callsOf(first.id);
    expect(count).toMatchObject({ toolName: 'count_to', state: 'interrupted' });
    const firstParts = await page.evaluate(() => JSON.parse(JSON.stringify(window.chat.messages[1]!.parts)));
    expect(firstParts.find((part: { type: string }) => part.type === 'tool-count_to')).toMatchObject({
      state: 'output-error',
      errorText: INTERRUPTED_TEXT,
    });
  });
});

/** useChat marks streamed text parts `done`; a message built from the thread has no streaming state to mark. */
function withoutTextState(part: { type: string; state?: string }) {
  if (part.type !== 'text' && part.type !== 'reasoning') return part;
  const { state: _done, ...rest } = part;
  return rest;
}
