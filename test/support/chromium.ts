import { chromium, type Browser } from 'playwright-core';
import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where the browser project's Chromium listens for Playwright (chromium-server.ts launches it). */
    chromiumEndpoint: string;
  }
}

/**
 * The browser project's one Chromium, for this test file: close it after the file's last test, which closes the
 * contexts the file made in it. Reached over a connection, it keeps no download in a file of this process: use
 * `download.saveAs`, not `download.path`.
 */
export function connectChromium(): Promise<Browser> {
  return chromium.connect(inject('chromiumEndpoint'));
}
