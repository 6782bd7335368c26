import { chromium } from 'playwright-core';
import type { TestProject } from 'vitest/node';

/** Debian's Chromium: Playwright cannot download its own browser here. */
const CHROMIUM_PATH = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * The browser project's global setup: one Chromium for all its files, each file connecting to it (chromium.ts) and
 * working in contexts of its own. A launch per file cost each file seconds on this two-core machine.
 */
export default async function launchChromium(project: TestProject): Promise<() => Promise<void>> {
  const server = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  project.provide('chromiumEndpoint', server.wsEndpoint());
  return () => server.close();
}
