import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * Where cpp-chat keeps its identity unless told: `$CPP_IDENTITY`, else `cpp/identity.json` in the user's config
 * directory (`$XDG_CONFIG_HOME`, else `~/.config`).
 */
export function defaultIdentityFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.CPP_IDENTITY ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'cpp', 'identity.json');
}
