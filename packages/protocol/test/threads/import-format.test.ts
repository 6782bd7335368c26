import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { exportThread, recogniseImportFormat } from '../../src/index.js';
import { conversation } from '../support/graphs.js';

const CHATGPT: unknown = JSON.parse(
  readFileSync(new URL('../fixtures/chatgpt-conversations.json', import.meta.url), 'utf8'),
);

describe('recogniseImportFormat', () => {
  const exported = exportThread(conversation(), 'Trees', 10);

  it('tells a CPP JSON export, or a list of them, from a ChatGPT conversations.json', () => {
    expect(recogniseImportFormat(exported)).toBe('cpp-thread');
    expect(recogniseImportFormat([exported, exported])).toBe('cpp-thread');
    expect(recogniseImportFormat(CHATGPT)).toBe('chatgpt');
    // A list of anything else is for the ChatGPT reader to refuse, naming the conversation at fault.
    expect(recogniseImportFormat([])).toBe('chatgpt');
    expect(recogniseImportFormat([{ title: 'x' }])).toBe('chatgpt');
  });

  it('recognises nothing in a document of neither kind', () => {
    for (const document of [null, 3, 'cpp-thread', { format: 'other' }, { thread: exported.thread }])
      expect(recogniseImportFormat(document)).toBeUndefined();
  });
});
