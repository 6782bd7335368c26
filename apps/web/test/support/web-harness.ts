import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import {
  DEFAULT_CHUNK_INTERVAL_MS,
  DemoProvider,
  MemoryStore,
  type CPPServer,
  type CPPServerOptions,
  type ModelProvider,
} from '@promethea/cpp-server';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { onTestFinished } from 'vitest';
import { startServer } from '../../../../packages/server/test/support/start-server.js';
import { sharedChromium } from '../../../../test/support/chromium.js';
import { ChatPage } from './chat-page.js';

const STATIC_DIR = fileURLToPath(new URL('../../dist', import.meta.url));
const SCREENSHOT_DIR = fileURLToPath(new URL('../../../../test-output/web', import.meta.url));

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 375, height: 740 };

export interface HarnessOptions {
  /**
   * A slow demo model, so that an answer is still streaming when the test pivots or stops it: 3,000 words at 25 a
   * second, two minutes, longer than any test waits on a loaded machine before it stops or pivots.
   */
  slow?: boolean;
  /** Another model instead of the demo one. */
  model?: ModelProvider;
  /** Several models to offer, instead of one. */
  models?: CPPServerOptions['models'];
  /** Server limits other than the defaults. */
  limits?: CPPServerOptions['limits'];
}

/**
 * The real cpp-server with the demo model, serving the built UI, and a real Chromium to use it: what a person
 * gets from `npm start`. The server and the browser profiles are closed when the test that started them ends.
 */
export class WebHarness {
  private readonly contexts: BrowserContext[] = [];

  private constructor(
    private readonly browser: Browser,
    private readonly options: HarnessOptions,
    /** The server's store, for a test that gives a person a history of threads. */
    readonly store: MemoryStore,
    private server: CPPServer,
  ) {}

  static async start(options: HarnessOptions = {}): Promise<WebHarness> {
    if (!existsSync(`${STATIC_DIR}/index.html`))
      throw new Error(`no built UI in ${STATIC_DIR}: run \`npm run build\` first`);
    const store = new MemoryStore();
    const harness = new WebHarness(await sharedChromium(), options, store, await startWebServer(options, store, 0));
    onTestFinished(() => harness.close());
    return harness;
  }

  get url(): string {
    return `http://127.0.0.1:${this.server.port}/`;
  }

  /**
   * A new browser profile (its own IndexedDB, so its own identity). `bypassCSP` for axe-core (support/accessibility.ts):
   * the page's own policy stays in force in every other test.
   */
  async newContext(
    viewport = DESKTOP,
    options: Pick<BrowserContextOptions, 'colorScheme' | 'bypassCSP'> = {},
  ): Promise<BrowserContext> {
    const context = await this.browser.newContext({ viewport, ...options });
    this.contexts.push(context);
    return context;
  }

  /** A page of `context` (default: a new profile) with the chat loaded, connected and showing a thread. */
  async openChat(context?: BrowserContext, url = this.url): Promise<ChatPage> {
    const chat = new ChatPage(await (context ?? (await this.newContext())).newPage());
    await chat.page.goto(url);
    await chat.waitUntilReady();
    return chat;
  }

  /** Stops the server as a deploy would (connections close with 1001); `restart` brings it back on the same port. */
  async stopServer(): Promise<number> {
    const port = this.server.port;
    await this.server.close();
    return port;
  }

  async restartServer(port: number): Promise<void> {
    this.server = await startWebServer(this.options, this.store, port);
  }

  async close(): Promise<void> {
    await Promise.all(this.contexts.map((context) => context.close()));
    await this.server.close();
  }
}

function startWebServer(options: HarnessOptions, store: MemoryStore, port: number): Promise<CPPServer> {
  // Slow: an answer long enough to pivot or stop mid-way. Otherwise the whole answer `npm start` shows, quickly.
  const model = options.models
    ? {}
    : { model: options.model ?? new DemoProvider(options.slow ? { delayMs: 40, words: 3000 } : { delayMs: 2 }) };
  // As `npm start` runs it: every connection proves its did:key, and chunks are paced.
  return startServer({
    port,
    ...model,
    models: options.models,
    store,
    staticDir: STATIC_DIR,
    auth: 'did-key',
    chunkIntervalMs: DEFAULT_CHUNK_INTERVAL_MS,
    limits: options.limits,
  });
}

/** Saves what the page looks like now as test-output/web/<name>.png, for a person to look at. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOT_DIR}/${name}.png` });
}
