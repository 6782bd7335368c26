import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { Figure } from './figure.js';
import type { BenchOptions } from './options.js';

export interface BenchResult {
  generatedAt: string;
  command: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  /** One-minute load averages when the run began and ended: above the number of CPUs, other work shared the machine. */
  loadAverage: { start: number; end: number };
  options: BenchOptions;
  figures: Figure[];
  /** Per-run figures and search steps behind the medians. */
  details: Record<string, unknown>;
}

export function benchResult(
  options: BenchOptions,
  figures: Figure[],
  details: Record<string, unknown>,
  startLoad: number,
): BenchResult {
  return {
    generatedAt: new Date().toISOString(),
    command: `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`,
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform}-${process.arch}`,
    },
    loadAverage: { start: round(startLoad), end: round(loadavg()[0]!) },
    options,
    figures,
    details,
  };
}

export function writeResult(path: string, result: BenchResult): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(result, null, 2)}\n`);
}

/** The table as Markdown, so that the same text reads in a terminal and pastes into the README. */
export function formatTable(figures: readonly Figure[]): string {
  const rows = figures.map((line) => [
    line.label,
    show(line.value, line.unit, line.atLeast),
    `${show(line.baseline.value, line.unit, line.baselineAtLeast)} (${line.baseline.label})`,
    ratioText(line.ratio),
    line.target ? line.target.text : '',
    line.target ? (line.target.met ? 'met' : '**missed**') : '',
  ]);
  const header = ['Measure', 'CPP', 'Baseline (same run)', 'Ratio', 'Target', ''];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  return [line(header), line(widths.map((width) => '-'.repeat(width))), ...rows.map(line)].join('\n');
}

function ratioText(ratio: number): string {
  if (!Number.isFinite(ratio)) return '–';
  return `${Math.abs(ratio) >= 0.01 ? ratio.toFixed(2) : ratio.toPrecision(2)}×`;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function show(value: number, unit: Figure['unit'], atLeast = false): string {
  if (!Number.isFinite(value)) return '–';
  const prefix = atLeast ? '≥ ' : '';
  if (unit === 'ms') return `${prefix}${value < 10 ? value.toFixed(2) : value.toFixed(1)} ms`;
  if (unit === 'KB') return `${prefix}${value.toFixed(1)} KB`;
  if (unit === 'bytes') return `${prefix}${Math.round(value).toLocaleString('en-US')} B`;
  return `${prefix}${Math.round(value).toLocaleString('en-US')}`;
}
