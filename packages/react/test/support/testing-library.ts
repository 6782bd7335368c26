import { configure } from '@testing-library/react';

// `waitFor` waits for a condition, not for a time: its default limit of one second failed a test on a loaded
// machine (the client still "connecting" after it). The test's own timeout is what catches a condition that never
// comes.
configure({ asyncUtilTimeout: 60_000 });

export { act, renderHook, waitFor } from '@testing-library/react';
