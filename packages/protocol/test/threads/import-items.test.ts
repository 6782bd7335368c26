import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { readImportDocument, readImportItem } from '../../src/index.js';

const FIXTURE = JSON.parse(
  readFileSync(new URL('../fixtures/chatgpt-conversations.json', import.meta.url), 'utf8'),
) as unknown[];

/** What an import keeps of a thread, leaving out the ids each read makes anew. */
function shapeOf(threads: ReturnType<typeof readImportDocument>) {
  return threads.map(({ title, createdAt, updatedAt, graph }) => ({
    title,
    createdAt,
    updatedAt,
    contents: Object.values(graph.nodes).map((node) => [node.role, node.content, node.status]),
  }));
}

describe('readImportItem', () => {
  it('reads the elements of a document one by one as readImportDocument reads the whole', () => {
    const whole = readImportDocument('chatgpt', FIXTURE, 7);
    const itemByItem = FIXTURE.flatMap((item, index) => readImportItem('chatgpt', item, index, 7));
    expect(shapeOf(itemByItem)).toEqual(shapeOf(whole));
  });

  it('names a malformed element as readImportDocument names it', () => {
    const broken = [
      ...FIXTURE,
      { title: 'Broken', mapping: { a: { message: null, parent: 'nowhere', children: [] } } },
    ];
    const unparsable = [...FIXTURE, { title: 'No mapping' }];
    for (const document of [broken, unparsable]) {
      const index = document.length - 1;
      const whole = (() => {
        try {
          readImportDocument('chatgpt', document, 7);
        } catch (error) {
          return (error as Error).message;
        }
      })();
      expect(whole).toBeDefined();
      expect(() => readImportItem('chatgpt', document[index], index, 7)).toThrow(whole);
    }
  });
});
