import { createRequire } from 'node:module';
import type * as PromClient from 'prom-client';

let loaded: typeof PromClient | undefined;

/**
 * prom-client, loaded when a server first makes its metrics rather than when the package is imported: an
 * application that turns metrics off (`metrics: false`) never loads it. It is CommonJS, so `require` loads it
 * synchronously, inside the server's constructor.
 */
export function promClient(): typeof PromClient {
  loaded ??= createRequire(import.meta.url)('prom-client') as typeof PromClient;
  return loaded;
}
