import { newMessageId, newThreadId, type ThreadGraph } from '@promethea/cpp-protocol';
import type { StoredThread } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import type { RecordedFrame } from './support/frame-recorder.js';
import { WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 120_000;
const HISTORY = 10_000;
const OLDEST_TITLE = 'The oldest thread, about quetzalcoatlus';

/** `count` threads of one exchange each, a minute apart, older than anything the test does; the last the oldest. */
function history(ownerDid: string, count: number): StoredThread[] {
  const newest = Date.now() - 60_000;
  return Array.from({ length: count }, (_, index) => {
    const at = newest - index * 60_000;
    const [question, answer] = [newMessageId(), newMessageId()];
    const threadId = newThreadId();
    const graph: ThreadGraph = {
      threadId,
      rootNodeId: question,
      activeHeadMessageId: answer,
      version: 0,
      nodes: {
        [question]: {
          id: question,
          parentId: null,
          childrenIds: [answer],
          role: 'user',
          content: `Question ${index}`,
          status: 'completed',
          createdAt: at,
        },
        [answer]: {
          id: answer,
          parentId: question,
          childrenIds: [],
          role: 'assistant',
          content: `Answer ${index}`,
          status: 'completed',
          createdAt: at,
        },
      },
    };
    const title = index === count - 1 ? OLDEST_TITLE : `Conversation ${index}`;
    return { threadId, ownerDid, title, createdAt: at, updatedAt: at, graph };
  });
}

const listPages = (sent: readonly RecordedFrame[]) => sent.filter((frame) => frame.type === 'CPP_THREAD_LIST');

describe('the thread list of a long history', () => {
  it(
    'draws a few dozen rows of 10,000 threads, loads pages as it scrolls, and search finds the oldest',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const owner = (await harness.store.threadSummary(chat.threadId()))!.ownerDid;
      await harness.store.importThreads(history(owner, HISTORY));
      const sentBefore = chat.frames.sent.length;
      await chat.page.reload();
      await chat.waitUntilReady();

      const list = chat.page.getByRole('navigation', { name: 'Threads' });
      await list.getByRole('button', { name: /^Conversation 0\b/ }).waitFor();
      const rows = list.locator('li');
      // The first page, and as much more as the view's margin asks for: not the history.
      const firstPages = listPages(chat.frames.sent.slice(sentBefore));
      expect(firstPages[0]?.payload).toEqual({ limit: 50, subscribe: true });
      expect(firstPages.length).toBeLessThanOrEqual(3);
      expect(await rows.count()).toBeLessThan(80);

      // Scrolled to the end of what is loaded, again and again: each time the next page comes, the DOM stays small.
      const scroller = chat.page.locator('#threads-panel');
      const pagesReceived = () => chat.frames.received.filter((frame) => frame.type === 'CPP_THREADS').length;
      for (let scroll = 1; scroll <= 8; scroll += 1) {
        const before = pagesReceived();
        await scroller.evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
        await chat.frames.receivedFrame((frame) => frame.type === 'CPP_THREADS' && pagesReceived() > before);
        expect(await rows.count()).toBeLessThan(80);
      }
      const cursors = listPages(chat.frames.sent).filter((frame) => typeof frame.payload.cursor === 'string');
      expect(cursors.length).toBeGreaterThanOrEqual(8);
      // The rows drawn are the ones scrolled to: far down the history.
      await scroller.evaluate((element) => element.scrollTo({ top: element.scrollHeight }));
      await chat.page.waitForFunction(() =>
        [...document.querySelectorAll('.thread-list .thread-title')].some(
          (title) => Number(/^Conversation (\d+)$/.exec(title.textContent ?? '')?.[1]) > 400,
        ),
      );

      // Search goes to the server: the oldest thread, never loaded into the list, is found and opens.
      const shownBefore = chat.threadId();
      await list.getByRole('searchbox', { name: 'Search threads' }).fill('quetzalcoatlus');
      const results = list.getByRole('list', { name: 'Search results' });
      await results.getByRole('button', { name: new RegExp(`^${OLDEST_TITLE}`) }).click();
      await chat.page.waitForFunction(
        (previous) => decodeURIComponent(window.location.hash.slice(1)) !== previous,
        shownBefore,
      );
      expect((await harness.store.threadSummary(chat.threadId()))?.summary.title).toBe(OLDEST_TITLE);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
