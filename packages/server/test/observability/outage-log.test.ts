import { describe, expect, it } from 'vitest';
import { OutageLog } from '../../src/observability/outage-log.js';
import { captureLogs } from './support/captured-logs.js';

describe("a service's outage in the log", () => {
  it('is told when it starts, again every reminder while it lasts, and when it ends, without a stack trace', () => {
    const logs = captureLogs('info');
    let now = 1_000;
    const outages = new OutageLog(logs.logger, 'store', 30_000, () => now);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

    // A failure every 150 ms for a minute and a half, as the background tasks of one instance make them.
    for (let failure = 0; failure < 600; failure += 1) {
      outages.failed(refused);
      now += 150;
    }
    outages.reachable();
    outages.reachable();

    expect(logs.lines.map(({ level, msg, service, failures }) => ({ level, msg, service, failures }))).toEqual([
      { level: 'error', msg: 'store unreachable', service: 'store', failures: undefined },
      { level: 'warn', msg: 'store still unreachable', service: 'store', failures: 201 },
      { level: 'warn', msg: 'store still unreachable', service: 'store', failures: 401 },
      { level: 'info', msg: 'store reachable again', service: 'store', failures: 600 },
    ]);
    expect(logs.lines[0]).toMatchObject({ error: 'connect ECONNREFUSED 127.0.0.1:5432' });
    expect(logs.lines.at(-1)!.downForMs).toBe(90_000);
    expect(logs.text()).not.toContain('"stack"');
  });
});
