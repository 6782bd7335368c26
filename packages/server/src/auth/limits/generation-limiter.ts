import { CPPError, ErrorCode } from '@promethea/cpp-protocol';
import { ANONYMOUS_DID, type Identity } from '../../engine/identity.js';
import { ConnectionCounter } from './connection-counter.js';
import type { ServerLimits } from './server-limits.js';

/** Who asks for an answer: a client's connection (a forwarded command on a cluster node is nobody's). */
export interface GenerationRequester {
  readonly connectionId?: string | undefined;
  readonly identity?: Identity | undefined;
}

const SERVER = 'server';

/**
 * The answers being written at once, counted per connection, per identity and for the whole server process, since
 * each is a model call the operator pays for and identities cost nothing to make. An answer past a limit is refused
 * (RATE_LIMITED, docs/PROTOCOL.md §20) rather than queued: a queued prompt would hold its thread's turn and leave the
 * client guessing when its answer starts, while a refusal says at once to retry once one of its answers has ended.
 * Anonymous connections are nobody's: only their connection and the server count them.
 */
export class GenerationLimiter {
  private readonly connections = new ConnectionCounter();
  private readonly identities = new ConnectionCounter();
  private readonly server = new ConnectionCounter();

  constructor(
    private readonly limits: Pick<
      ServerLimits,
      'maxGenerationsPerConnection' | 'maxGenerationsPerIdentity' | 'maxGenerations'
    >,
  ) {}

  /** Counts one more answer for `requester`, or throws RATE_LIMITED; the returned function uncounts it, once. */
  admit(requester: GenerationRequester): () => void {
    const { maxGenerationsPerConnection, maxGenerationsPerIdentity, maxGenerations } = this.limits;
    const { connectionId } = requester;
    const did = requester.identity?.did === ANONYMOUS_DID ? undefined : requester.identity?.did;
    if (exceeds(this.server, SERVER, maxGenerations))
      refuse(`the server writes ${maxGenerations} answers at once, its limit; retry once one has ended`);
    if (did !== undefined && exceeds(this.identities, did, maxGenerationsPerIdentity)) {
      refuse(`${did} has ${maxGenerationsPerIdentity} answers being written, the limit; retry once one has ended`);
    }
    if (connectionId !== undefined && exceeds(this.connections, connectionId, maxGenerationsPerConnection)) {
      refuse(
        `this connection has ${maxGenerationsPerConnection} answers being written, the limit; retry once one has ended`,
      );
    }
    const releases = [
      this.server.acquire(SERVER),
      ...(did === undefined ? [] : [this.identities.acquire(did)]),
      ...(connectionId === undefined ? [] : [this.connections.acquire(connectionId)]),
    ];
    return () => {
      for (const release of releases) release();
    };
  }
}

function exceeds(counter: ConnectionCounter, key: string, max: number): boolean {
  return max > 0 && counter.count(key) >= max;
}

function refuse(message: string): never {
  throw new CPPError(ErrorCode.RATE_LIMITED, message);
}
