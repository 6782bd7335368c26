import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface Violation {
  id: string;
  impact: string | null | undefined;
  help: string;
  /** A selector of each element at fault. */
  targets: string[];
}

/**
 * Every WCAG 2.x A/AA and best-practice problem axe-core finds on the page as it is now, whatever its impact. axe goes
 * in through the DevTools protocol; open the page in a context with `bypassCSP: true`, as `WebHarness.newContext`
 * does for `axe`, so that the checks that build helper elements or read styles (color-contrast among them) run as
 * they would on a page without a policy rather than fail quietly under it.
 */
export async function axeViolations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{
            violations: Array<{
              id: string;
              impact?: string | null;
              help: string;
              nodes: Array<{ target: unknown[] }>;
            }>;
          }>;
        };
      }
    ).axe;
    const { violations } = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      // Still marked experimental in axe, so off unless asked for: a control's name must hold its visible text.
      rules: { 'label-content-name-mismatch': { enabled: true } },
    });
    return violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      targets: violation.nodes.map((node) => node.target.join(' ')),
    }));
  });
}
