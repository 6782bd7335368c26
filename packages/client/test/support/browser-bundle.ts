import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

let bundled: Promise<string> | undefined;

/**
 * The browser entry bundled as one script that defines the global `CPP`, as a page would load it; bundled once
 * for all the files a test worker runs.
 */
export function browserBundle(): Promise<string> {
  bundled ??= bundle();
  return bundled;
}

async function bundle(): Promise<string> {
  const bundle = await rolldown({
    input: fileURLToPath(new URL('../../src/browser.ts', import.meta.url)),
    platform: 'browser',
    resolve: {
      alias: { '@promethea/cpp-protocol': fileURLToPath(new URL('../../../protocol/src/index.ts', import.meta.url)) },
    },
  });
  const { output } = await bundle.generate({ format: 'iife', name: 'CPP', inlineDynamicImports: true });
  await bundle.close();
  return output[0].code;
}

/**
 * A page of its own origin (http://127.0.0.1:port, a secure context: WebCrypto and IndexedDB are there) that loads
 * `script`. Close it after the test.
 */
export async function servePage(script: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    if (request.url === '/cpp.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script src="/cpp.js"></script>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
