import type { AttachmentOptions } from '../attachments/attachment-options.js';
import type { AuthOption } from './auth-mode.js';
import type { ServerLimits } from './limits/server-limits.js';
import type { ReplayCache } from './replay-cache.js';

/** The part of `CPPServerOptions` about who may connect, as whom, how much, and over what. */
export interface AccessOptions {
  /**
   * How identities are known (docs/PROTOCOL.md §2.5). Default `'claimed'`, the seed spec's behaviour: the
   * X-Client-Sovereign-DID header is trusted and a thread id is the capability to its thread. `'did-key'` (the CLI's
   * default) makes every connection prove its did:key, and keeps each thread its owner's.
   */
  auth?: AuthOption;
  /** The public URL of this endpoint, named as the audience of every challenge. Default: derived from each request's Host. */
  publicUrl?: string;
  /** Origins whose pages may connect: origins, `self` (the server's own) or `*`. Default `['*']`. */
  allowedOrigins?: readonly string[];
  /**
   * Host names this server answers to at the upgrade, against DNS rebinding: IP addresses, `localhost` and the host
   * of `publicUrl` always pass; `*` lets every Host through. Others get HTTP 403. Default `['*']`.
   */
  allowedHosts?: readonly string[];
  /** Behind a reverse proxy: take the client's address from X-Forwarded-For and the scheme from X-Forwarded-Proto. */
  trustProxy?: boolean;
  /** Serve `wss://` directly with this certificate and key (PEM). Omit behind a TLS-terminating proxy. */
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Per-client limits; each field defaults to `DEFAULT_LIMITS`. */
  limits?: Partial<ServerLimits>;
  /**
   * Files in prompts: their limits, and the key tickets are signed with (docs/PROTOCOL.md §27). An import's files
   * are held to the same limits.
   */
  attachments?: AttachmentOptions;
  /** Challenge lifetime (default 30 000 ms, at most 60 000), tolerated clock skew (default 2 000 ms), replay cache. */
  challenge?: { ttlMs?: number; clockSkewMs?: number; replayCache?: ReplayCache };
}
