import { describe, expect, it } from 'vitest';
import { descriptorWarning, openFilesLimit } from '../../src/cli/descriptor-limit.js';

const PROC_LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             63704                63704                processes
Max open files            1024                 1048576              files
Max locked memory         8388608              8388608              bytes
`;

describe('the descriptor limit the CLI needs', () => {
  it('is read as the soft limit of /proc/self/limits, and unknown without it or when unlimited', () => {
    expect(openFilesLimit(PROC_LIMITS)).toBe(1024);
    expect(openFilesLimit(PROC_LIMITS.replace(/1024 /, 'unlimited '))).toBeUndefined();
    expect(openFilesLimit('')).toBeUndefined();
  });

  it('is warned about when a few addresses at --max-sockets-per-ip would use every descriptor', () => {
    expect(descriptorWarning(1024, 512)).toMatch(/may open 1024 files .* 2 addresses at --max-sockets-per-ip 512/);
    expect(descriptorWarning(1024, 512)).toMatch(/ulimit -n 65536/);
    expect(descriptorWarning(65_536, 512)).toBeUndefined();
    expect(descriptorWarning(1024, 0)).toBeUndefined();
    expect(descriptorWarning(undefined, 512)).toBeUndefined();
  });
});
