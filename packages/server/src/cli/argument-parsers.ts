import { InvalidArgumentError } from 'commander';

/** A whole number of at least 0. */
export function integer(value: string): number {
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new InvalidArgumentError('expected a whole number');
  return parsed;
}

/** An on/off setting: `--log-prompts` alone, `--log-prompts=false`, or `CPP_LOG_PROMPTS=1`. */
export function onOff(value: string): boolean {
  const normalized = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on'].includes(normalized)) return true;
  if (['false', '0', 'no', 'off', ''].includes(normalized)) return false;
  throw new InvalidArgumentError('expected true or false');
}

export function decimal(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed)) throw new InvalidArgumentError('expected a number');
  return parsed;
}

/** A comma-separated list, its items trimmed, empty items dropped. */
export function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
