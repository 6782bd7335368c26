/**
 * The size of a soak-sized suite (crashes, frames, clients, runs): a sample in `npm test`, big enough that the suite
 * still fails without the behaviour it checks, and the full size under `npm run test:soak` (CPP_SOAK=full). The
 * suite's own variable (`knob`, e.g. CPP_CRASH_ITERATIONS) overrides both.
 */
export function soakSize(knob: string, sizes: { sample: number; full: number }): number {
  const set = process.env[knob];
  if (set !== undefined && set !== '') return Number(set);
  return process.env.CPP_SOAK === 'full' ? sizes.full : sizes.sample;
}
