/** How many threads one CPP_THREADS holds when CPP_THREAD_LIST does not say, and the most it may ask for. */
export const THREAD_LIST_DEFAULT_LIMIT = 50;
export const THREAD_LIST_MAX_LIMIT = 200;

/** The longest cursor a client may send back; a server's cursors stay within it. */
export const THREAD_LIST_CURSOR_MAX_LENGTH = 200;
