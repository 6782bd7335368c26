import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often a server that says nothing when it listens is asked whether it answers yet. */
const HEALTH_CHECK_INTERVAL_MS = 50;

/** A port nothing listens on now, for a process that takes its port as an argument. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Whether a CPP server answers its health check on the port. */
async function canConnect(port: number): Promise<boolean> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
  return response?.ok ?? false;
}

/** A server started as a child process, with what it has written so far. */
export interface ServerProcess {
  process: ChildProcess;
  stdout: string;
  stderr: string;
}

/**
 * Resolves once `server` answers its health check on `port`, asked again every 50 ms (a server such as the Quick
 * Start's says nothing when it listens, so there is no event to wait for). Rejects with the server's output as soon
 * as its process exits first: a server that crashed fails the test at once, saying why.
 */
export async function untilServing(port: number, server: ServerProcess): Promise<void> {
  const child = server.process;
  const exited = new AbortController();
  const onExit = (): void => exited.abort();
  child.once('exit', onExit);
  try {
    while (!(await canConnect(port))) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `the server exited (${child.exitCode ?? child.signalCode}) before it answered on port ${port}:\n${server.stdout}\n${server.stderr}`,
        );
      }
      await sleep(HEALTH_CHECK_INTERVAL_MS, undefined, { signal: exited.signal }).catch(() => undefined);
    }
  } finally {
    child.off('exit', onExit);
  }
}
