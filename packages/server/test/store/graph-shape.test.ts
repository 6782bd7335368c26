import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const GRAPH_RECORDS = fileURLToPath(new URL('../../dist/store/graph-records.js', import.meta.url));

/**
 * Run by a Node of its own with V8's natives syntax (`%HaveSameMap`: whether two objects share a hidden class),
 * on the built code, as a server runs it: every store makes a loaded thread's graph with `assembleGraph`.
 */
const PROBE = `
const { assembleGraph } = await import(${JSON.stringify(GRAPH_RECORDS)});
const graphs = [];
for (let index = 0; index < 100; index += 1) {
  const node = { id: 'msg_' + index, parentId: null, childrenIds: [], role: 'user', content: 'Hi', status: 'completed', createdAt: 1 };
  graphs.push(assembleGraph({ threadId: 'thread_' + index, version: index, rootNodeId: node.id, activeHeadMessageId: node.id }, [node]));
}
console.log(graphs.filter((graph) => !%HaveSameMap(graph, graphs[0])).length);
`;

describe("a loaded thread's graph", () => {
  it('shares one hidden class with every other graph: a class of its own cost each open thread ~260 bytes', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--allow-natives-syntax',
      '--input-type=module',
      '--eval',
      PROBE,
    ]);
    expect(Number(stdout.trim())).toBe(0);
  });
});
