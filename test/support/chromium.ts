import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium, as its headless shell (package chromium-headless-shell): Playwright cannot download its own
 * browser here, and the headless shell is what Playwright itself runs for headless Chromium. The same Blink and V8
 * as the full browser, without its windowing and display compositor: the browser tests took 162 s with the full
 * `chromium` and 82 s with the shell on this two-core machine, most of the difference in drawing each chunk of a
 * streaming answer. CPP_CHROMIUM=/usr/bin/chromium runs them in the full browser.
 */
const CHROMIUM_PATH = process.env.CPP_CHROMIUM ?? '/usr/bin/chromium-headless-shell';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let running: Promise<Browser> | undefined;

/**
 * The Chromium of this test worker, launched on first use and kept for every browser test file the worker runs
 * (the browser project does not isolate its files): launching one per file cost each file seconds on a loaded
 * machine. Tests never close it; each test works in browser contexts (profiles) of its own and closes them. It
 * goes when the worker does: it talks to Playwright over a pipe and exits when the pipe closes.
 */
export function sharedChromium(): Promise<Browser> {
  running ??= chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS }).then((browser) => {
    // A browser that crashed is launched anew for the next test instead of failing every test after it.
    browser.on('disconnected', () => (running = undefined));
    return browser;
  });
  return running;
}
