import { describe, expect, it } from 'vitest';
import { matchPattern, type Json, type MatchResult } from '../src/index.js';

const streamed = new Map([
  ['msg_a1 content', { text: 'Spiking neural networks (SNNs) are models in which', chunkStarts: [0, 31] }],
  ['msg_a1 reasoning', { text: 'The user asks about SNNs.', chunkStarts: [0, 9] }],
]);

function run(pattern: Json, actual: unknown, bindings: Record<string, Json> = {}): MatchResult {
  return matchPattern(pattern, actual, {
    bindings: new Map(Object.entries(bindings)),
    streamed: (nodeId, part = 'content') => streamed.get(`${nodeId} ${part}`),
  });
}

function failure(result: MatchResult): string {
  return result.ok ? 'matched' : result.message;
}

describe('matchPattern', () => {
  it('matches plain values exactly and objects by the keys of the pattern, ignoring extra fields', () => {
    expect(
      run(
        { type: 'CPP_ERROR', payload: { code: 'NOT_FOUND' } },
        { type: 'CPP_ERROR', timestamp: 1, payload: { code: 'NOT_FOUND', message: 'x' } },
      ).ok,
    ).toBe(true);
    expect(failure(run({ payload: { code: 'NOT_FOUND' } }, { payload: { code: 'CONFLICT' } }))).toBe(
      'payload.code: expected "NOT_FOUND", got "CONFLICT"',
    );
    expect(failure(run({ payload: { version: 1 } }, { payload: {} }))).toBe(
      'payload.version: expected 1, got (absent)',
    );
  });

  it('matches arrays element by element, with their length', () => {
    expect(run(['a', 'b'], ['a', 'b']).ok).toBe(true);
    expect(failure(run(['a'], ['a', 'b']))).toBe('(frame): expected an array of 1, got ["a","b"]');
  });

  it('checks types, regular expressions, absence, sets and bounds', () => {
    expect(run({ $any: 'integer' }, 3).ok).toBe(true);
    expect(run({ $any: 'integer' }, 3.5).ok).toBe(false);
    expect(run({ $any: true }, undefined).ok).toBe(false);
    expect(run({ $match: '^msg_' }, 'msg_1').ok).toBe(true);
    expect(run({ $match: '^msg_' }, 'thread_1').ok).toBe(false);
    expect(run({ refId: { $absent: true } }, { code: 'X' }).ok).toBe(true);
    expect(run({ refId: { $absent: true } }, { refId: 'x' }).ok).toBe(false);
    expect(run({ $in: ['stop', 'length'] }, 'length').ok).toBe(true);
    expect(run({ $gte: 1, $lte: 2 }, 3).ok).toBe(false);
    expect(run({ $length: 80 }, 'a'.repeat(80)).ok).toBe(true);
    expect(run({ $not: { $contains: { threadId: 't1' } } }, [{ threadId: 't2' }]).ok).toBe(true);
    expect(run({ $not: { $contains: { threadId: 't1' } } }, [{ threadId: 't1' }]).ok).toBe(false);
  });

  it('captures values for later $ref, in the order the keys are written', () => {
    const result = run(
      { activeHeadMessageId: { $capture: 'a1' }, nodes: { x: { id: { $ref: 'a1' } } } },
      { activeHeadMessageId: 'msg_a', nodes: { x: { id: 'msg_a' } } },
    );
    expect(result.ok && result.bindings.get('a1')).toBe('msg_a');
    expect(failure(run({ id: { $ref: 'a1' } }, { id: 'msg_b' }, { a1: 'msg_a' }))).toBe(
      'id: expected "msg_a" (a1), got "msg_b"',
    );
    expect(run({ $capture: 'a1' }, 'msg_b', { a1: 'msg_a' }).ok).toBe(false);
  });

  it('matches $values one to one in any order, backtracking over captures', () => {
    const nodes = { msg_u: { id: 'msg_u', role: 'user' }, msg_a: { id: 'msg_a', role: 'assistant' } };
    const result = run({ $values: [{ id: { $capture: 'any' } }, { id: { $ref: 'user' }, role: 'user' }] }, nodes, {
      user: 'msg_u',
    });
    expect(result.ok && result.bindings.get('any')).toBe('msg_a');
    expect(run({ $values: [{ role: 'user' }] }, nodes).ok).toBe(false);
    expect(run({ $values: [] }, {}).ok).toBe(true);
    expect(failure(run({ $values: [{ role: 'user' }, { role: 'system' }] }, nodes))).toMatch(
      /^no entry of \(frame\) matches \{"role":"system"\}/,
    );
    expect(run({ $values: [{ n: 2 }, { n: 1 }] }, [{ n: 1 }, { n: 2 }]).ok).toBe(true);
  });

  it('compares with the text streamed to the connection, whole or cut, and the part of the last chunk before a cut', () => {
    const bindings = { a1: 'msg_a1' };
    expect(run({ $streamed: 'a1' }, 'Spiking neural networks (SNNs) are models in which', bindings).ok).toBe(true);
    expect(run({ $streamed: 'a1', cut: 40 }, 'Spiking neural networks (SNNs) are model', bindings).ok).toBe(true);
    expect(run({ $streamedLength: 'a1' }, 50, bindings).ok).toBe(true);
    expect(run({ $lastChunk: 'a1', cut: 40 }, 'are model', bindings).ok).toBe(true);
    expect(run({ $lastChunk: 'a1', cut: { $ref: 'cut' } }, 'Spiking', { ...bindings, cut: 7 }).ok).toBe(true);
    expect(run({ $lastChunk: 'a1' }, 'are models in which', bindings).ok).toBe(true);
    expect(run({ $lastChunk: 'a1', cut: 0 }, '', bindings).ok).toBe(true);
  });

  it('compares with the reasoning streamed to the connection when the part parameter names it', () => {
    const bindings = { a1: 'msg_a1' };
    expect(run({ $streamed: 'a1', part: 'reasoning' }, 'The user asks about SNNs.', bindings).ok).toBe(true);
    expect(run({ $streamedLength: 'a1', part: 'reasoning' }, 25, bindings).ok).toBe(true);
    expect(run({ $lastChunk: 'a1', part: 'reasoning', cut: 13 }, 'asks', bindings).ok).toBe(true);
    expect(() => run({ $streamed: 'a1', part: 'thoughts' }, '', bindings)).toThrow(/part is "content" or "reasoning"/);
  });

  it('raises a scenario error for an unknown operator or an unbound variable', () => {
    expect(() => run({ $regex: 'x' }, 'x')).toThrow(/unknown operator \$regex/);
    expect(() => run({ $ref: 'nothing' }, 'x')).toThrow(/variable "nothing" is not bound/);
  });
});
