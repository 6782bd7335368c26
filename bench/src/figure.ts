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
  target?: Target;
  /** A bound rather than a measurement: the search stopped at its maximum. */
  atLeast?: boolean;
  baselineAtLeast?: boolean;
}

export type Comparison = '≤' | '≥' | '<' | '>';

/**
 * What a figure is held to. A ratio to the same-run baseline holds on any machine, so that is what targets are
 * (`of: 'ratio'`); a size in bytes, which no machine changes, may be held to a number of its own (`of: 'value'`).
 */
export interface Target {
  of: 'ratio' | 'value';
  comparison: Comparison;
  bound: number;
  /** As the table shows it, e.g. `≤ 1.5×`. */
  text: string;
  met: boolean;
}

/** A target on the ratio to the baseline: `ratioTarget('≤', 1.5)` is met by a figure at most 1.5× its baseline. */
export function ratioTarget(comparison: Comparison, bound: number): Omit<Target, 'met'> {
  return { of: 'ratio', comparison, bound, text: `${comparison} ${bound}×` };
}

/** A target on the figure itself, for sizes: `valueTarget('≤', 2048, '≤ 2 KB')`. */
export function valueTarget(comparison: Comparison, bound: number, text: string): Omit<Target, 'met'> {
  return { of: 'value', comparison, bound, text };
}

export function figure(fields: Omit<Figure, 'ratio' | 'target'> & { target?: Omit<Target, 'met'> }): Figure {
  const ratio = fields.value / fields.baseline.value;
  const { target, ...rest } = fields;
  if (!target) return { ...rest, ratio };
  return {
    ...rest,
    ratio,
    target: { ...target, met: holds(target.of === 'ratio' ? ratio : fields.value, target.comparison, target.bound) },
  };
}

/** A figure that could not be taken (NaN: a run failed) meets no target. */
function holds(value: number, comparison: Comparison, bound: number): boolean {
  switch (comparison) {
    case '≤':
      return value <= bound;
    case '≥':
      return value >= bound;
    case '<':
      return value < bound;
    case '>':
      return value > bound;
  }
}
