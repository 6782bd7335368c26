import { expect } from 'vitest';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** One scrape of GET /metrics, parsed from Prometheus' text format. */
export class Scrape {
  constructor(
    readonly text: string,
    private readonly samples: readonly Sample[],
  ) {}

  /** The sum of the samples named `name` whose labels include `labels`; 0 when there is none. */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.matching(name, labels).reduce((sum, sample) => sum + sample.value, 0);
  }

  /** Whether a sample named `name` (with those labels) was exposed. */
  has(name: string, labels: Record<string, string> = {}): boolean {
    return this.matching(name, labels).length > 0;
  }

  private matching(name: string, labels: Record<string, string>): Sample[] {
    return this.samples.filter(
      (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
    );
  }
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** GETs /metrics of the server on `port`, checking that it answers in Prometheus' text format. */
export async function scrape(port: number): Promise<Scrape> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await response.text();
  return new Scrape(text, text.split('\n').flatMap(parseSample));
}

function parseSample(line: string): Sample[] {
  const match = SAMPLE.exec(line);
  if (!match || line.startsWith('#')) return [];
  const labels = Object.fromEntries([...(match[2] ?? '').matchAll(LABEL)].map((label) => [label[1]!, label[2]!]));
  return [{ name: match[1]!, labels, value: Number(match[3]) }];
}
