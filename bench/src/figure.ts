/** One line of the report: a CPP figure beside its same-run baseline. */
export interface Figure {
  /** Stable key for comparing results across commits, e.g. `pivot.halted.p99.1000`. */
  id: string;
  /** What is measured, as the table shows it. */
  label: string;
  unit: 'ms' | 'KB' | 'bytes' | 'streams';
  value: number;
  baseline: { label: string; value: number };
  /** value / baseline. */
  ratio: number;
  target?: { text: string; met: boolean };
  /** A bound rather than a measurement: the search stopped at its maximum. */
  atLeast?: boolean;
  baselineAtLeast?: boolean;
}

export function figure(fields: Omit<Figure, 'ratio'>): Figure {
  return { ...fields, ratio: fields.value / fields.baseline.value };
}
