import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Identity } from '../engine/identity.js';
import type { ThreadRegistry } from '../engine/thread-registry.js';
import type { ConversationStore } from '../store/conversation-store.js';
import type { UpgradeRefusal } from './upgrade-refusal.js';
import { publicSessionUrl } from './audience.js';
import { DEFAULT_ATTACHMENT_LIMITS } from '../attachments/attachment-options.js';
import type { AccessOptions } from './access-options.js';
import { ConnectionGuard, type GuardSettings } from './connection-guard.js';
import { ANY_HOST } from './host-policy.js';
import { ConnectionCounter } from './limits/connection-counter.js';
import { GenerationLimiter } from './limits/generation-limiter.js';
import { DEFAULT_LIMITS, type ServerLimits } from './limits/server-limits.js';
import { MemoryReplayCache } from './replay-cache.js';
import { ThreadAccess } from './thread-access.js';
import { SAME_ORIGIN } from './origin-policy.js';
import { ShareLinks } from './share-links.js';
import { ThreadInvites } from './thread-invites.js';
import { ThreadMembers } from './thread-members.js';
import { admit, type Admission, type AdmissionSettings } from './upgrade-admission.js';

const CHALLENGE_TTL_MS = 30_000;
const CLOCK_SKEW_MS = 2_000;

/**
 * A server's access control, built from its options: who may connect (the upgrade), as whom (each connection's
 * guard) and to which threads. The connection counts live here, shared by every connection of the server.
 */
export class AccessControl {
  readonly limits: ServerLimits;
  readonly threads: ThreadAccess;
  /** Who shares which thread. */
  readonly members: ThreadMembers;
  /** The invites to shared threads. */
  readonly invites: ThreadInvites;
  /** The read-only share links of threads. */
  readonly shareLinks: ShareLinks;
  /** The answers being written at once, per connection, identity and server: every answer starts through it. */
  readonly generations: GenerationLimiter;
  private readonly admission: AdmissionSettings;
  private readonly dids = new ConnectionCounter();
  private readonly sockets = new ConnectionCounter();
  /** One for every guard: a connection keeps only what is its own. */
  private readonly guardSettings: GuardSettings;

  constructor(
    options: AccessOptions,
    registry: ThreadRegistry,
    store: ConversationStore,
    onAuthenticated: (identity: Identity, connectionId: string) => void,
  ) {
    const auth = options.auth ?? 'claimed';
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.threads = new ThreadAccess(registry, store, {
      ownerOnly: auth !== 'claimed',
      limits: this.limits,
      fileLimits: { ...DEFAULT_ATTACHMENT_LIMITS, ...options.attachments },
    });
    this.members = new ThreadMembers(this.threads, store, auth !== 'claimed');
    this.invites = new ThreadInvites(this.threads, this.members, store, this.limits);
    const embeddable = (options.allowedOrigins ?? ['*']).some((origin) => origin !== SAME_ORIGIN);
    this.shareLinks = new ShareLinks(this.threads, store, this.limits, () => embeddable);
    this.generations = new GenerationLimiter(this.limits);
    this.admission = {
      auth,
      allowedOrigins: options.allowedOrigins ?? ['*'],
      allowedHosts: [
        ...(options.allowedHosts ?? [ANY_HOST]),
        ...(options.publicUrl === undefined ? [] : [new URL(options.publicUrl).hostname]),
      ],
      trustProxy: options.trustProxy ?? false,
      publicUrl: options.publicUrl === undefined ? undefined : publicSessionUrl(options.publicUrl),
      secure: options.tls !== undefined,
      challengeTtlMs: options.challenge?.ttlMs ?? CHALLENGE_TTL_MS,
      maxConnectionsPerIp: this.limits.maxConnectionsPerIp,
      addresses: new ConnectionCounter(),
    };
    this.guardSettings = {
      limits: this.limits,
      replayCache: options.challenge?.replayCache ?? new MemoryReplayCache(),
      clockSkewMs: options.challenge?.clockSkewMs ?? CLOCK_SKEW_MS,
      dids: this.dids,
      onAuthenticated,
    };
  }

  /**
   * A TCP connection to the server's own HTTP server, before any request: past `maxSocketsPerIp` it is closed at once.
   * Upgrades are counted when they arrive (`maxConnectionsPerIp`, 429); without this, idle sockets that never send one
   * used up the process's file descriptors and locked everyone out. Behind a trusted proxy every socket is the
   * proxy's, so none is counted here.
   */
  admitSocket(socket: Socket): void {
    const max = this.limits.maxSocketsPerIp;
    if (max <= 0 || this.admission.trustProxy) return;
    const address = socket.remoteAddress ?? 'unknown';
    if (this.sockets.count(address) >= max) {
      socket.destroy();
      return;
    }
    socket.once('close', this.sockets.acquire(address));
  }

  /** Whether an upgrade request may connect, and as whom. */
  admit(request: IncomingMessage): Promise<Admission | UpgradeRefusal> {
    return admit(request, this.admission);
  }

  /** The guard of a connection just opened, counted against its address until it ends. */
  guard(admission: Admission): ConnectionGuard {
    return new ConnectionGuard(admission, this.guardSettings, this.admission.addresses.acquire(admission.address));
  }
}
