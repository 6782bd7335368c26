import type { Locator, Page } from 'playwright-core';
import { FrameRecorder } from './frame-recorder.js';

export interface ShownMessage {
  id: string;
  role: string;
  status: string;
  /** The node's content length as the bubble states it. */
  length: number;
  /** The text a person reads in the bubble's body (formulas as their TeX). */
  text: string;
}

/** Waits until `element` has the keyboard focus. */
export async function waitForFocus(element: Locator): Promise<void> {
  const handle = await element.elementHandle();
  await element.page().waitForFunction((found) => found === document.activeElement, handle);
}

/** The chat UI as a person uses it: what it shows, and the few things they do with it. */
export class ChatPage {
  readonly frames: FrameRecorder;
  /** Uncaught exceptions and console errors of the page: a working UI has none. */
  readonly problems: string[] = [];

  constructor(readonly page: Page) {
    this.frames = new FrameRecorder(page);
    page.on('pageerror', (error) => this.problems.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') this.problems.push(message.text());
    });
  }

  get composer(): Locator {
    return this.page.getByRole('textbox', { name: 'Message' });
  }

  get messageList(): Locator {
    return this.page.getByRole('log', { name: 'Conversation' });
  }

  async waitUntilReady(): Promise<void> {
    await this.page.getByRole('status', { name: 'Connection: Live' }).waitFor();
    await this.composer.waitFor();
  }

  /** Types into the composer and presses Enter, as a person sends. */
  async send(text: string): Promise<void> {
    await this.composer.fill(text);
    await this.composer.press('Enter');
  }

  /** Sends "one", then "two", each once the answer before it is complete: the two turns many tests start from. */
  async twoTurns(): Promise<{ first: ShownMessage; second: ShownMessage }> {
    await this.send('one');
    const first = await this.waitForAnswer('completed');
    await this.send('two');
    const second = await this.waitForAnswer('completed', { otherThan: first.id });
    return { first, second };
  }

  /** The button of a message's toolbar (Copy, Edit, Regenerate, Continue, Anchor, Delete). */
  action(id: string, name: string): Locator {
    return this.message(id)
      .getByRole('toolbar', { name: 'Message actions' })
      .getByRole('button', { name, exact: true });
  }

  message(id: string): Locator {
    return this.messageList.locator(`article[data-node-id="${id}"]`);
  }

  async messages(): Promise<ShownMessage[]> {
    return this.messageList.locator('article.message').evaluateAll((articles) =>
      articles.map((article) => {
        const element = article as HTMLElement;
        // Math is typeset once KaTeX has loaded, after the message shows: its formulas are read as their TeX, which
        // typeset ones keep in an annotation, so that the text does not depend on when it is read.
        const body = element.querySelector('.message-body')?.cloneNode(true) as HTMLElement | undefined;
        for (const formula of body?.querySelectorAll('.math') ?? []) {
          const source = formula.querySelector('annotation[encoding="application/x-tex"]');
          if (source) formula.textContent = source.textContent;
        }
        return {
          id: element.dataset.nodeId ?? '',
          role: element.classList.contains('message-user') ? 'user' : 'assistant',
          status: element.dataset.status ?? '',
          length: Number(element.dataset.length),
          text: body?.textContent?.trim() ?? '',
        };
      }),
    );
  }

  async lastMessage(): Promise<ShownMessage> {
    const shown = await this.messages();
    const last = shown.at(-1);
    if (!last) throw new Error('the chat shows no message');
    return last;
  }

  /** Waits until the last message of the branch is an answer in `status`, at least `minLength` long, not `otherThan`. */
  async waitForAnswer(
    status: string,
    { minLength = 0, otherThan = '' }: { minLength?: number; otherThan?: string } = {},
  ): Promise<ShownMessage> {
    await this.page.waitForFunction(
      ([wanted, least, excluded]) => {
        const articles = document.querySelectorAll<HTMLElement>('[role="log"] article.message');
        const last = articles[articles.length - 1];
        if (!last?.classList.contains('message-assistant') || last.dataset.nodeId === excluded) return false;
        return last.dataset.status === wanted && Number(last.dataset.length) >= least;
      },
      [status, minLength, otherThan] as const,
    );
    return this.lastMessage();
  }

  /** Opens the active thread's menu (Rename, Export, Delete) in the thread list, unless it is open. */
  async openThreadMenu(): Promise<void> {
    const toggle = this.page
      .getByRole('navigation', { name: 'Threads' })
      .getByRole('button', { name: 'Thread actions' });
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
  }

  /** The thread id in the URL. */
  threadId(): string {
    return decodeURIComponent(new URL(this.page.url()).hash.slice(1));
  }
}
