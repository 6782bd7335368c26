import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import type { AccessOptions } from '../auth/access-options.js';
import { DEFAULT_LIMITS, type ServerLimits } from '../auth/limits/server-limits.js';
import { integer, list, onOff } from './argument-parsers.js';

interface LimitFlag {
  /** As commander declares it. */
  flag: string;
  /** Where commander puts its value: the long flag in camelCase. */
  attribute: string;
  env: string;
  description: string;
}

/**
 * Every limit of ServerLimits, under its key, and the flag that sets it: the one place a limit is named. The
 * attribute is not always the key (`--max-frames-per-second` sets `framesPerSecond`).
 */
const LIMIT_FLAGS = {
  maxPromptLength: {
    flag: '--max-prompt-length <chars>',
    attribute: 'maxPromptLength',
    env: 'CPP_MAX_PROMPT_LENGTH',
    description: 'longest prompt, in UTF-16 code units',
  },
  framesPerSecond: {
    flag: '--max-frames-per-second <count>',
    attribute: 'maxFramesPerSecond',
    env: 'CPP_MAX_FRAMES_PER_SECOND',
    description: 'frames a connection may send per second',
  },
  frameBurst: {
    flag: '--frame-burst <count>',
    attribute: 'frameBurst',
    env: 'CPP_FRAME_BURST',
    description: 'frames a connection may send at once',
  },
  maxConnectionsPerIp: {
    flag: '--max-connections-per-ip <count>',
    attribute: 'maxConnectionsPerIp',
    env: 'CPP_MAX_CONNECTIONS_PER_IP',
    description: 'open connections from one address',
  },
  maxSocketsPerIp: {
    flag: '--max-sockets-per-ip <count>',
    attribute: 'maxSocketsPerIp',
    env: 'CPP_MAX_SOCKETS_PER_IP',
    description: 'TCP connections from one address, before or after the upgrade (above --max-connections-per-ip)',
  },
  maxConnectionsPerDid: {
    flag: '--max-connections-per-did <count>',
    attribute: 'maxConnectionsPerDid',
    env: 'CPP_MAX_CONNECTIONS_PER_DID',
    description: 'open connections of one DID',
  },
  maxThreadsPerDid: {
    flag: '--max-threads-per-did <count>',
    attribute: 'maxThreadsPerDid',
    env: 'CPP_MAX_THREADS_PER_DID',
    description: 'threads one DID may own',
  },
  maxMembersPerThread: {
    flag: '--max-members-per-thread <count>',
    attribute: 'maxMembersPerThread',
    env: 'CPP_MAX_MEMBERS_PER_THREAD',
    description: 'members one thread may have beside its owner',
  },
  maxInvitesPerThread: {
    flag: '--max-invites-per-thread <count>',
    attribute: 'maxInvitesPerThread',
    env: 'CPP_MAX_INVITES_PER_THREAD',
    description: 'usable invites one thread may have at once',
  },
  maxShareLinksPerDid: {
    flag: '--max-share-links-per-did <count>',
    attribute: 'maxShareLinksPerDid',
    env: 'CPP_MAX_SHARE_LINKS_PER_DID',
    description: 'read-only share links one DID may have at once',
  },
  maxNodesPerThread: {
    flag: '--max-nodes-per-thread <count>',
    attribute: 'maxNodesPerThread',
    env: 'CPP_MAX_NODES_PER_THREAD',
    description: 'messages one thread may hold',
  },
  maxThreadBytes: {
    flag: '--max-thread-bytes <bytes>',
    attribute: 'maxThreadBytes',
    env: 'CPP_MAX_THREAD_BYTES',
    description: 'bytes of text (UTF-8) one thread may hold',
  },
  syncsPerMinute: {
    flag: '--max-syncs-per-minute <count>',
    attribute: 'maxSyncsPerMinute',
    env: 'CPP_MAX_SYNCS_PER_MINUTE',
    description: 'full syncs one identity may ask for per minute',
  },
  searchesPerMinute: {
    flag: '--max-searches-per-minute <count>',
    attribute: 'maxSearchesPerMinute',
    env: 'CPP_MAX_SEARCHES_PER_MINUTE',
    description: 'thread searches one identity may make per minute',
  },
  maxGenerationsPerConnection: {
    flag: '--max-generations-per-connection <count>',
    attribute: 'maxGenerationsPerConnection',
    env: 'CPP_MAX_GENERATIONS_PER_CONNECTION',
    description: 'answers one connection may have being written at once',
  },
  maxGenerationsPerIdentity: {
    flag: '--max-generations-per-identity <count>',
    attribute: 'maxGenerationsPerIdentity',
    env: 'CPP_MAX_GENERATIONS_PER_IDENTITY',
    description: 'answers one identity may have being written at once',
  },
  maxGenerations: {
    flag: '--max-generations <count>',
    attribute: 'maxGenerations',
    env: 'CPP_MAX_GENERATIONS',
    description: 'answers the server may be writing at once',
  },
  handshakeTimeoutMs: {
    flag: '--handshake-timeout-ms <ms>',
    attribute: 'handshakeTimeoutMs',
    env: 'CPP_HANDSHAKE_TIMEOUT_MS',
    description: 'time for the upgrade request to arrive',
  },
  authTimeoutMs: {
    flag: '--auth-timeout-ms <ms>',
    attribute: 'authTimeoutMs',
    env: 'CPP_AUTH_TIMEOUT_MS',
    description: 'time from the upgrade to an accepted proof',
  },
  messageTimeoutMs: {
    flag: '--message-timeout-ms <ms>',
    attribute: 'messageTimeoutMs',
    env: 'CPP_MESSAGE_TIMEOUT_MS',
    description: 'time one message may take to arrive whole',
  },
  idleTimeoutMs: {
    flag: '--idle-timeout-ms <ms>',
    attribute: 'idleTimeoutMs',
    env: 'CPP_IDLE_TIMEOUT_MS',
    description: 'time a connection may send nothing',
  },
} as const satisfies Record<keyof ServerLimits, LimitFlag>;

/** In the table's order, which is the help's. */
const LIMIT_KEYS = Object.keys(LIMIT_FLAGS) as (keyof ServerLimits)[];

/** The limit flags' values as commander parses them, each under its flag's attribute. */
type LimitFlagValues = { [Key in keyof ServerLimits as (typeof LIMIT_FLAGS)[Key]['attribute']]: number };

/** The flags of `cpp-server` about authentication, origins, TLS and limits, as commander parses them. */
export interface AccessFlags extends LimitFlagValues {
  auth: 'did-key' | 'claimed';
  publicUrl?: string;
  allowedOrigins: string[];
  allowedHosts: string[];
  /** The listen address of `--host`, which the Host header may name too. */
  host?: string;
  trustProxy: boolean;
  tlsCert?: string;
  tlsKey?: string;
}

/** Limits the CLI sets where CPPServer leaves them to the deployment: a public server needs them. */
const CLI_LIMITS: ServerLimits = {
  ...DEFAULT_LIMITS,
  maxConnectionsPerIp: 256,
  maxSocketsPerIp: 512,
  maxConnectionsPerDid: 32,
  maxThreadsPerDid: 10_000,
  maxGenerationsPerConnection: 8,
  maxGenerationsPerIdentity: 16,
  maxGenerations: 256,
};

export function addAccessFlags(program: Command): Command {
  program
    .addOption(
      new Option(
        '--auth <mode>',
        'did-key: every connection proves its did:key; claimed: trust the DID header (development only)',
      )
        .env('CPP_AUTH')
        .default('did-key')
        .choices(['did-key', 'claimed']),
    )
    .addOption(
      new Option('--public-url <url>', 'public URL of this server, named in every authentication challenge').env(
        'CPP_PUBLIC_URL',
      ),
    )
    .addOption(
      new Option(
        '--allowed-origins <origins>',
        'comma-separated origins whose pages may connect; "self" is this server, "*" any',
      )
        .env('CPP_ALLOWED_ORIGINS')
        .default(['self'], 'self')
        .argParser(list),
    )
    .addOption(
      new Option(
        '--allowed-hosts <hosts>',
        'comma-separated host names the Host header may carry, besides IP addresses, localhost, --host and --public-url\'s host; "*" any',
      )
        .env('CPP_ALLOWED_HOSTS')
        .default([], 'none')
        .argParser(list),
    )
    .addOption(
      new Option(
        '--trust-proxy [enabled]',
        'behind a reverse proxy: client address from X-Forwarded-For, scheme from X-Forwarded-Proto',
      )
        .env('CPP_TRUST_PROXY')
        .preset('true')
        .default(false)
        .argParser(onOff),
    )
    .addOption(
      new Option('--tls-cert <file>', 'PEM certificate: serve wss:// directly (with --tls-key)').env('CPP_TLS_CERT'),
    )
    .addOption(new Option('--tls-key <file>', 'PEM private key of --tls-cert').env('CPP_TLS_KEY'));
  for (const key of LIMIT_KEYS) {
    const { flag, env, description } = LIMIT_FLAGS[key];
    program.addOption(
      new Option(flag, `${description}; 0: no limit`).env(env).default(CLI_LIMITS[key]).argParser(integer),
    );
  }
  return program;
}

/** The CPPServer options the flags ask for; reads the TLS files. */
export async function accessOptionsOf(flags: AccessFlags): Promise<AccessOptions> {
  if ((flags.tlsCert === undefined) !== (flags.tlsKey === undefined))
    throw new Error('--tls-cert and --tls-key go together');
  const tls =
    flags.tlsCert && flags.tlsKey
      ? { cert: await readFile(flags.tlsCert), key: await readFile(flags.tlsKey) }
      : undefined;
  return {
    auth: flags.auth,
    allowedOrigins: flags.allowedOrigins,
    allowedHosts: flags.host === undefined ? flags.allowedHosts : [...flags.allowedHosts, flags.host],
    trustProxy: flags.trustProxy,
    publicUrl: flags.publicUrl,
    ...(tls ? { tls } : {}),
    limits: limitsOf(flags),
  };
}

/** Each limit's flag under its key. Every key is set: LIMIT_FLAGS has all of ServerLimits, as its `satisfies` checks. */
function limitsOf(flags: LimitFlagValues): ServerLimits {
  const limits: Partial<ServerLimits> = {};
  for (const key of LIMIT_KEYS) limits[key] = flags[LIMIT_FLAGS[key].attribute];
  return limits as ServerLimits;
}

/** What `--auth claimed` means, said where nobody can miss it: on stderr, before anything else. */
export const CLAIMED_AUTH_WARNING = [
  '  WARNING: --auth claimed. Identities are NOT proven: any client may claim any DID, and any client that',
  '  knows a thread id may read and write that thread. Use it for local development only; the default,',
  "  --auth did-key, makes every connection prove its did:key and keeps each thread its owner's.",
].join('\n');
