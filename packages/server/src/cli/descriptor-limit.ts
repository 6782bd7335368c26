import { readFileSync } from 'node:fs';

/**
 * How many addresses holding their whole `--max-sockets-per-ip` the process's descriptors should have room for before
 * the CLI warns: with fewer, a handful of hosts can take every descriptor, after which nobody can connect (and the
 * server cannot open its database or answer a health check).
 */
const ADDRESSES_TO_HOLD = 16;

/** The soft limit on open files of this process, from Linux's /proc/self/limits; undefined elsewhere or unlimited. */
export function openFilesLimit(limits: string | undefined = readProcLimits()): number | undefined {
  const soft = limits?.match(/^Max open files\s+(\d+)/m)?.[1];
  return soft === undefined ? undefined : Number(soft);
}

/**
 * A warning when the descriptors the process may open are too few for its per-address limit. Node cannot raise the
 * limit itself: the service manager or the shell that starts it must (docs/security.md).
 */
export function descriptorWarning(openFiles: number | undefined, maxSocketsPerIp: number): string | undefined {
  if (openFiles === undefined || maxSocketsPerIp <= 0 || openFiles >= ADDRESSES_TO_HOLD * maxSocketsPerIp)
    return undefined;
  const addresses = Math.max(1, Math.floor(openFiles / maxSocketsPerIp));
  return [
    `  WARNING: this process may open ${openFiles} files (ulimit -n), and ${addresses} addresses at --max-sockets-per-ip ${maxSocketsPerIp}`,
    '  would use them all: nobody else could connect. Raise the limit before starting cpp-server (ulimit -n 65536;',
    '  LimitNOFILE=65536 in a systemd unit; docker run --ulimit nofile=65536), or lower --max-sockets-per-ip.',
  ].join('\n');
}

function readProcLimits(): string | undefined {
  try {
    return readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
}
