import type { CPPClient, ConnectionStatus } from '@promethea/cpp-client';

/** Every status a client reports from now on, with a way to wait until one has been reported a number of times. */
export function recordStatuses(client: CPPClient) {
  const seen: ConnectionStatus[] = [];
  const waiters: Array<() => void> = [];
  client.on('status', (status) => {
    seen.push(status);
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    seen,
    /** Resolves once `status` has been reported `times` times in all. */
    async reached(status: ConnectionStatus, times = 1): Promise<void> {
      while (seen.filter((candidate) => candidate === status).length < times)
        await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}
