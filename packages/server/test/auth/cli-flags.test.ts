import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ServerLimits } from '../../src/auth/limits/server-limits.js';
import { accessOptionsOf, addAccessFlags, type AccessFlags } from '../../src/cli/access-flags.js';
import { runCli, type CliProcess } from '../observability/support/cli-process.js';
import { expectError, openThread } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { authenticate, challengeOf } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';

const folder = mkdtempSync(join(tmpdir(), 'cpp-cli-flags-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function parse(argv: string[], env: Record<string, string> = {}): AccessFlags {
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return addAccessFlags(new Command().exitOverride()).parse(argv, { from: 'user' }).opts<AccessFlags>();
  } finally {
    process.env = saved;
  }
}

/** Each limit with the flag and the variable that set it, written out apart from the CLI's table: a wrong mapping shows. */
const LIMIT_SETTERS: Record<keyof ServerLimits, [flag: string, env: string]> = {
  maxPromptLength: ['--max-prompt-length', 'CPP_MAX_PROMPT_LENGTH'],
  framesPerSecond: ['--max-frames-per-second', 'CPP_MAX_FRAMES_PER_SECOND'],
  frameBurst: ['--frame-burst', 'CPP_FRAME_BURST'],
  maxConnectionsPerIp: ['--max-connections-per-ip', 'CPP_MAX_CONNECTIONS_PER_IP'],
  maxSocketsPerIp: ['--max-sockets-per-ip', 'CPP_MAX_SOCKETS_PER_IP'],
  maxConnectionsPerDid: ['--max-connections-per-did', 'CPP_MAX_CONNECTIONS_PER_DID'],
  maxThreadsPerDid: ['--max-threads-per-did', 'CPP_MAX_THREADS_PER_DID'],
  maxMembersPerThread: ['--max-members-per-thread', 'CPP_MAX_MEMBERS_PER_THREAD'],
  maxInvitesPerThread: ['--max-invites-per-thread', 'CPP_MAX_INVITES_PER_THREAD'],
  maxShareLinksPerDid: ['--max-share-links-per-did', 'CPP_MAX_SHARE_LINKS_PER_DID'],
  maxNodesPerThread: ['--max-nodes-per-thread', 'CPP_MAX_NODES_PER_THREAD'],
  maxThreadBytes: ['--max-thread-bytes', 'CPP_MAX_THREAD_BYTES'],
  syncsPerMinute: ['--max-syncs-per-minute', 'CPP_MAX_SYNCS_PER_MINUTE'],
  searchesPerMinute: ['--max-searches-per-minute', 'CPP_MAX_SEARCHES_PER_MINUTE'],
  maxGenerationsPerConnection: ['--max-generations-per-connection', 'CPP_MAX_GENERATIONS_PER_CONNECTION'],
  maxGenerationsPerIdentity: ['--max-generations-per-identity', 'CPP_MAX_GENERATIONS_PER_IDENTITY'],
  maxGenerations: ['--max-generations', 'CPP_MAX_GENERATIONS'],
  handshakeTimeoutMs: ['--handshake-timeout-ms', 'CPP_HANDSHAKE_TIMEOUT_MS'],
  authTimeoutMs: ['--auth-timeout-ms', 'CPP_AUTH_TIMEOUT_MS'],
  messageTimeoutMs: ['--message-timeout-ms', 'CPP_MESSAGE_TIMEOUT_MS'],
  idleTimeoutMs: ['--idle-timeout-ms', 'CPP_IDLE_TIMEOUT_MS'],
};

describe('the access flags', () => {
  it('default to did-key, pages of the server itself, and limits for a public server', async () => {
    const options = await accessOptionsOf(parse([]));
    expect(options).toMatchObject({ auth: 'did-key', allowedOrigins: ['self'], trustProxy: false });
    expect(options.limits).toMatchObject({
      maxConnectionsPerIp: 256,
      maxSocketsPerIp: 512,
      maxConnectionsPerDid: 32,
      maxThreadsPerDid: 10_000,
      maxPromptLength: 100_000,
    });
    expect(options.limits).toMatchObject({
      maxGenerationsPerConnection: 8,
      maxGenerationsPerIdentity: 16,
      maxGenerations: 256,
    });
  });

  it('set every limit, from flags or from the environment', async () => {
    const flags = parse(
      [
        '--max-prompt-length',
        '5',
        '--max-frames-per-second',
        '6',
        '--frame-burst',
        '7',
        '--max-connections-per-ip',
        '8',
        '--max-sockets-per-ip',
        '20',
        '--max-connections-per-did',
        '9',
        '--max-threads-per-did',
        '10',
        '--max-nodes-per-thread',
        '11',
        '--max-thread-bytes',
        '15',
        '--max-syncs-per-minute',
        '16',
        '--max-searches-per-minute',
        '22',
        '--max-generations-per-connection',
        '17',
        '--max-generations-per-identity',
        '18',
        '--max-generations',
        '19',
        '--handshake-timeout-ms',
        '12',
        '--auth-timeout-ms',
        '13',
        '--message-timeout-ms',
        '21',
        '--max-members-per-thread',
        '23',
        '--max-invites-per-thread',
        '24',
        '--max-share-links-per-did',
        '25',
      ],
      {
        CPP_IDLE_TIMEOUT_MS: '14',
        CPP_AUTH: 'claimed',
        CPP_ALLOWED_ORIGINS: 'https://a.example, self',
        CPP_ALLOWED_HOSTS: 'chat.example,cpp.internal',
      },
    );
    expect(await accessOptionsOf(flags)).toEqual({
      auth: 'claimed',
      allowedOrigins: ['https://a.example', 'self'],
      allowedHosts: ['chat.example', 'cpp.internal'],
      trustProxy: false,
      limits: {
        maxPromptLength: 5,
        framesPerSecond: 6,
        frameBurst: 7,
        maxConnectionsPerIp: 8,
        maxSocketsPerIp: 20,
        maxConnectionsPerDid: 9,
        maxThreadsPerDid: 10,
        maxMembersPerThread: 23,
        maxInvitesPerThread: 24,
        maxShareLinksPerDid: 25,
        maxNodesPerThread: 11,
        maxThreadBytes: 15,
        syncsPerMinute: 16,
        searchesPerMinute: 22,
        maxGenerationsPerConnection: 17,
        maxGenerationsPerIdentity: 18,
        maxGenerations: 19,
        handshakeTimeoutMs: 12,
        authTimeoutMs: 13,
        messageTimeoutMs: 21,
        idleTimeoutMs: 14,
      },
    });
  });

  it.each(Object.entries(LIMIT_SETTERS))('set %s, and no other limit, from %j', async (key, [flag, env]) => {
    const defaults = (await accessOptionsOf(parse([]))).limits;
    expect((await accessOptionsOf(parse([flag, '4242']))).limits).toStrictEqual({ ...defaults, [key]: 4242 });
    expect((await accessOptionsOf(parse([], { [env]: '4343' }))).limits).toStrictEqual({ ...defaults, [key]: 4343 });
  });

  it('read the TLS certificate and key, which go together', async () => {
    const [cert, key] = [join(folder, 'cert.pem'), join(folder, 'key.pem')];
    writeFileSync(cert, 'CERT');
    writeFileSync(key, 'KEY');
    expect((await accessOptionsOf(parse(['--tls-cert', cert, '--tls-key', key]))).tls).toEqual({
      cert: Buffer.from('CERT'),
      key: Buffer.from('KEY'),
    });
    await expect(accessOptionsOf(parse(['--tls-cert', cert]))).rejects.toThrow(/go together/);
  });

  it('refuse a mode that does not exist', () => {
    expect(() => parse(['--auth', 'none'])).toThrow(/did-key, claimed/);
  });
});

describe('cpp-server', () => {
  let cli: CliProcess | undefined;
  afterEach(async () => {
    await cli?.stop();
    cli = undefined;
  });

  it('with --auth did-key, takes no frame before the proof', async () => {
    cli = await runCli(['--auth', 'did-key']);
    const client = await RawClient.connect(cli.url);
    const challenge = await challengeOf(client);
    client.send('CPP_THREAD_LIST', {}, { id: 'early' });
    await expectError(client, 'UNAUTHORIZED', { refId: 'early' });
    await authenticate(client, TestIdentity.generate(), challenge);
    await openThread(client);
    await client.close();
    expect(cli.lines.join('\n')).toContain('auth:    did-key');
  });

  it('with --auth claimed, warns on stderr that identities are not proven', async () => {
    cli = await runCli(['--auth', 'claimed']);
    const client = await RawClient.connect(cli.url);
    await openThread(client);
    await client.close();
    expect(cli.lines.join('\n')).toMatch(/WARNING: --auth claimed\. Identities are NOT proven/);
  });
});
