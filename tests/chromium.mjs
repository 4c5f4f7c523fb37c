// The headless Chromium of every browser test (the explorer's, the package's, the consumers'): Debian's chromium
// driven by playwright-core. Under scripts/with-chromium.mjs (npm test, npm run test:e2e) one browser serves a whole
// run: its endpoint is in ATTNLAB_CHROMIUM_WS and a test file connects to it instead of launching its own; close()
// then ends only that file's connection and its contexts. A file run alone launches its own browser.
import { chromium } from 'playwright-core';

export const launchOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
};

/** A browser for one test file: the run's shared one when there is one, else a new one. */
export function launchChromium() {
  const shared = process.env.ATTNLAB_CHROMIUM_WS;
  return shared ? chromium.connect(shared) : chromium.launch(launchOptions);
}
