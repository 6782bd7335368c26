import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { AccessOptions } from '../auth/access-options.js';
import { DEFAULT_LIMITS, type ServerLimits } from '../auth/limits/server-limits.js';
import { integer, list, onOff } from './argument-parsers.js';

/** The flags of `cpp-server` about authentication, origins, TLS and limits, as commander parses them. */
export interface AccessFlags {
  auth: 'did-key' | 'claimed';
  publicUrl?: string;
  allowedOrigins: string[];
  trustProxy: boolean;
  tlsCert?: string;
  tlsKey?: string;
  maxPromptLength: number;
  maxFramesPerSecond: number;
  frameBurst: number;
  maxConnectionsPerIp: number;
  maxConnectionsPerDid: number;
  maxThreadsPerDid: number;
  maxNodesPerThread: number;
  handshakeTimeoutMs: number;
  authTimeoutMs: number;
  idleTimeoutMs: number;
}

/** Limits the CLI sets where CPPServer leaves them to the deployment: a public server needs them. */
const CLI_LIMITS: ServerLimits = { ...DEFAULT_LIMITS, maxConnectionsPerIp: 256, maxConnectionsPerDid: 32, maxThreadsPerDid: 10_000 };

const LIMIT_FLAGS: [flag: string, env: string, key: keyof ServerLimits, description: string][] = [
  ['--max-prompt-length <chars>', 'CPP_MAX_PROMPT_LENGTH', 'maxPromptLength', 'longest prompt, in UTF-16 code units'],
  ['--max-frames-per-second <count>', 'CPP_MAX_FRAMES_PER_SECOND', 'framesPerSecond', 'frames a connection may send per second'],
  ['--frame-burst <count>', 'CPP_FRAME_BURST', 'frameBurst', 'frames a connection may send at once'],
  ['--max-connections-per-ip <count>', 'CPP_MAX_CONNECTIONS_PER_IP', 'maxConnectionsPerIp', 'open connections from one address'],
  ['--max-connections-per-did <count>', 'CPP_MAX_CONNECTIONS_PER_DID', 'maxConnectionsPerDid', 'open connections of one DID'],
  ['--max-threads-per-did <count>', 'CPP_MAX_THREADS_PER_DID', 'maxThreadsPerDid', 'threads one DID may own'],
  ['--max-nodes-per-thread <count>', 'CPP_MAX_NODES_PER_THREAD', 'maxNodesPerThread', 'messages one thread may hold'],
  ['--handshake-timeout-ms <ms>', 'CPP_HANDSHAKE_TIMEOUT_MS', 'handshakeTimeoutMs', 'time for the upgrade request to arrive'],
  ['--auth-timeout-ms <ms>', 'CPP_AUTH_TIMEOUT_MS', 'authTimeoutMs', 'time from the upgrade to an accepted proof'],
  ['--idle-timeout-ms <ms>', 'CPP_IDLE_TIMEOUT_MS', 'idleTimeoutMs', 'time a connection may send nothing'],
];

export function addAccessFlags(program: Command): Command {
  program
    .addOption(new Option('--auth <mode>', 'did-key: every connection proves its did:key; claimed: trust the DID header (development only)').env('CPP_AUTH').default('did-key').choices(['did-key', 'claimed']))
    .addOption(new Option('--public-url <url>', 'public URL of this server, named in every authentication challenge').env('CPP_PUBLIC_URL'))
    .addOption(new Option('--allowed-origins <origins>', 'comma-separated origins whose pages may connect; "self" is this server, "*" any').env('CPP_ALLOWED_ORIGINS').default(['self'], 'self').argParser(list))
    .addOption(new Option('--trust-proxy [enabled]', 'behind a reverse proxy: client address from X-Forwarded-For, scheme from X-Forwarded-Proto').env('CPP_TRUST_PROXY').preset('true').default(false).argParser(onOff))
    .addOption(new Option('--tls-cert <file>', 'PEM certificate: serve wss:// directly (with --tls-key)').env('CPP_TLS_CERT'))
    .addOption(new Option('--tls-key <file>', 'PEM private key of --tls-cert').env('CPP_TLS_KEY'));
  for (const [flag, env, key, description] of LIMIT_FLAGS) {
    program.addOption(new Option(flag, `${description}; 0: no limit`).env(env).default(CLI_LIMITS[key]).argParser(integer));
  }
  return program;
}

/** The CPPServer options the flags ask for; reads the TLS files. */
export async function accessOptionsOf(flags: AccessFlags): Promise<AccessOptions> {
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined)) throw new Error('--tls-cert and --tls-key go together');
  const tls = flags.tlsCert && flags.tlsKey ? { cert: await readFile(flags.tlsCert), key: await readFile(flags.tlsKey) } : undefined;
  return {
    auth: flags.auth,
    allowedOrigins: flags.allowedOrigins,
    trustProxy: flags.trustProxy,
    ...(flags.publicUrl === undefined ? {} : { publicUrl: flags.publicUrl }),
    ...(tls ? { tls } : {}),
    limits: {
      maxPromptLength: flags.maxPromptLength,
      framesPerSecond: flags.maxFramesPerSecond,
      frameBurst: flags.frameBurst,
      maxConnectionsPerIp: flags.maxConnectionsPerIp,
      maxConnectionsPerDid: flags.maxConnectionsPerDid,
      maxThreadsPerDid: flags.maxThreadsPerDid,
      maxNodesPerThread: flags.maxNodesPerThread,
      handshakeTimeoutMs: flags.handshakeTimeoutMs,
      authTimeoutMs: flags.authTimeoutMs,
      idleTimeoutMs: flags.idleTimeoutMs,
    },
  };
}

/** What `--auth claimed` means, said where nobody can miss it: on stderr, before anything else. */
export const CLAIMED_AUTH_WARNING = [
  '  WARNING: --auth claimed. Identities are NOT proven: any client may claim any DID, and any client that',
  '  knows a thread id may read and write that thread. Use it for local development only; the default,',
  '  --auth did-key, makes every connection prove its did:key and keeps each thread its owner\'s.',
].join('\n');
