import type { CPPClient } from '@promethea/cpp-client';
import { createContext } from 'react';

/**
 * The client whose tickets open the files that messages carry (PROTOCOL.md §27.5): given once by the conversation,
 * read by every message that shows a file, so that the messages, memoised, need no prop for it.
 */
export const AttachmentClient = createContext<CPPClient | null>(null);
