import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

/** A history as a heavy user's: `conversations` ChatGPT conversations of `messages` messages each. */
export interface HistoryShape {
  conversations: number;
  messages: number;
}

/** In every message: what a search for a common word finds everywhere. */
export const COMMON_WORD = 'river';
/** In the oldest conversation's first prompt only: what a search for a rare word finds once. */
export const RARE_WORD = 'quetzalcoatlus';
/** The oldest conversation's title: a search that must find the end of a long history. */
export const OLDEST_TITLE = `The oldest conversation about ${RARE_WORD}`;

/** A little under 100 words a message: a ChatGPT export of 20,000 × 20 messages is then about 250 MB, as measured. */
const WORDS_PER_MESSAGE = 60;
const FIRST_CREATE_TIME = 1_600_000_000;

/** Deterministic words: the same shape gives the same file, so runs compare. */
export function randomWords(seed: number): (count: number) => string {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'do', 'gi', 'fu', 'he', 'ja', 'wy'];
  const vocabulary = Array.from({ length: 4_000 }, () => {
    const length = 2 + Math.floor(next() * 3);
    return Array.from({ length }, () => syllables[Math.floor(next() * syllables.length)]).join('');
  });
  return (count) => Array.from({ length: count }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(' ');
}

/** One conversation of the export, the `index`-th oldest: a chain of alternating prompts and answers. */
export function syntheticConversation(index: number, messages: number, words: (count: number) => string): object {
  const createTime = FIRST_CREATE_TIME + index * 60;
  const mapping: Record<string, object> = {};
  let parent: string | null = null;
  for (let turn = 0; turn < messages; turn += 1) {
    const id = `c${index}-m${turn}`;
    const rare = index === 0 && turn === 0 ? ` ${RARE_WORD}` : '';
    mapping[id] = {
      id,
      parent,
      children: turn + 1 < messages ? [`c${index}-m${turn + 1}`] : [],
      message: {
        id,
        author: { role: turn % 2 === 0 ? 'user' : 'assistant' },
        create_time: createTime + turn,
        content: { content_type: 'text', parts: [`${words(WORDS_PER_MESSAGE)} ${COMMON_WORD}${rare}`] },
        metadata: turn % 2 === 0 ? {} : { model_slug: 'gpt-4o' },
      },
    };
    parent = id;
  }
  return {
    title: index === 0 ? OLDEST_TITLE : `Conversation ${index}: ${words(4)}`,
    create_time: createTime,
    update_time: createTime + messages,
    mapping,
    current_node: parent,
  };
}

/** Writes a ChatGPT `conversations.json` of that shape to `path`, oldest first, one conversation at a time. */
export async function writeSyntheticHistory(path: string, { conversations, messages }: HistoryShape): Promise<number> {
  const out = createWriteStream(path);
  const words = randomWords(37);
  let bytes = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  await write('[');
  for (let index = 0; index < conversations; index += 1)
    await write(`${index === 0 ? '' : ','}\n${JSON.stringify(syntheticConversation(index, messages, words))}`);
  await write('\n]\n');
  out.end();
  await once(out, 'finish');
  return bytes;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      conversations: { type: 'string', default: '20000' },
      messages: { type: 'string', default: '20' },
      out: { type: 'string', default: 'conversations.json' },
    },
  });
  const shape = { conversations: Number(values.conversations), messages: Number(values.messages) };
  const bytes = await writeSyntheticHistory(values.out, shape);
  console.log(`wrote ${values.out}: ${shape.conversations} conversations × ${shape.messages} messages, ${bytes} bytes`);
}
