/**
 * Real headless Chromium (Debian's `chromium`, installed by scripts/system-deps.sh; never a
 * downloaded browser) driven with playwright-core, one temporary profile per launch.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface TestBrowser {
  /** The browser's one context, on a temporary profile directory. */
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: run scripts/system-deps.sh as root (it installs chromium)`);
  const profile = mkdtempSync(join(tmpdir(), 'moat-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
