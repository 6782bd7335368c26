import { findInvariantViolations, newThreadId } from '@promethea/cpp-protocol';
import { MemoryStore } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { figure, ratioTarget, valueTarget } from '../bench/src/figure.js';
import { buildLargeThread, seedChange } from '../bench/src/large-thread.js';
import { parseOptions } from '../bench/src/options.js';
import { formatTable } from '../bench/src/report.js';

// The parts of `npm run bench` whose mistakes would not show as a crash but as wrong figures.
describe('the bench harness', () => {
  it('builds a sound, branching thread of the asked size that a store loads back unchanged', async () => {
    const threadId = newThreadId();
    const graph = buildLargeThread(threadId, { nodes: 400, answerChars: 100 });
    expect(Object.keys(graph.nodes)).toHaveLength(400);
    expect(findInvariantViolations(graph)).toEqual([]);
    expect(Object.values(graph.nodes).some((node) => node.childrenIds.length > 1)).toBe(true);

    const store = new MemoryStore();
    await store.createThread({ threadId, ownerDid: 'anonymous', title: '', createdAt: 0, updatedAt: 0 });
    await store.commit(seedChange(graph), { updatedAt: 1 });
    expect((await store.loadThread(threadId))?.graph).toEqual(graph);
  });

  it('takes sizes from flags over BENCH_* variables over the defaults', () => {
    expect(parseOptions([], {}).idleConnections).toBe(5000);
    expect(parseOptions(['--quick'], {}).idleConnections).toBeLessThan(5000);
    expect(parseOptions([], { BENCH_IDLE_CONNECTIONS: '300', BENCH_LOADS: '1,10' })).toMatchObject({
      idleConnections: 300,
      loads: [1, 10],
    });
    expect(parseOptions(['--idle-connections', '200'], { BENCH_IDLE_CONNECTIONS: '300' }).idleConnections).toBe(200);
    expect(() => parseOptions(['--only', 'pivot,speed'], {})).toThrow(/unknown measure speed/);
    expect(parseOptions([], {}).peers).toEqual(['socketio', 'sse']);
    expect(parseOptions(['--peers', 'none'], {}).peers).toEqual([]);
    expect(parseOptions([], { BENCH_PEERS: 'sse' }).peers).toEqual(['sse']);
    expect(() => parseOptions(['--peers', 'grpc'], {})).toThrow(/unknown peer grpc/);
  });

  it('holds a figure to its target as a ratio to the same-run baseline (a size to a number), and a figure not taken to none', () => {
    const ratio = (value: number, baseline: number, target: ReturnType<typeof ratioTarget>) =>
      figure({ id: 'x', label: 'x', unit: 'ms', value, baseline: { label: 'b', value: baseline }, target }).target;
    expect(ratio(3, 2, ratioTarget('≤', 1.5))).toMatchObject({ of: 'ratio', text: '≤ 1.5×', met: true });
    expect(ratio(3.2, 2, ratioTarget('≤', 1.5))?.met).toBe(false);
    expect(ratio(1700, 2000, ratioTarget('≥', 0.85))?.met).toBe(true);
    expect(ratio(2, 2, ratioTarget('<', 1))?.met).toBe(false);
    expect(ratio(3, 2, ratioTarget('>', 1))?.met).toBe(true);
    expect(ratio(Number.NaN, 2, ratioTarget('≤', 1.5))?.met).toBe(false);
    expect(ratio(3, Number.NaN, ratioTarget('≥', 0.85))?.met).toBe(false);
    const bytes = figure({
      id: 'y',
      label: 'y',
      unit: 'bytes',
      value: 1900,
      baseline: { label: 'b', value: 5_000_000 },
      target: valueTarget('≤', 2048, '≤ 2 KB'),
    });
    expect(bytes.target).toMatchObject({ of: 'value', met: true });
  });

  it('shows each figure beside its baseline, the ratio, and a missed target as missed', () => {
    const table = formatTable([
      figure({
        id: 'a',
        label: 'Pivot p99',
        unit: 'ms',
        value: 12,
        baseline: { label: 'ws echo p99', value: 3 },
        target: ratioTarget('≤', 1.5),
      }),
      figure({
        id: 'b',
        label: 'Streams',
        unit: 'streams',
        value: 4000,
        atLeast: true,
        baseline: { label: 'raw ws', value: 8000 },
      }),
    ]);
    expect(table).toMatch(
      /\| Pivot p99 +\| 12\.0 ms +\| 3\.00 ms \(ws echo p99\) +\| 4\.00× +\| ≤ 1\.5× +\| \*\*missed\*\* +\|/,
    );
    expect(table).toContain('≥ 4,000');
  });
});
