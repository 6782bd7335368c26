import { encodeServerFrame, type PresentIdentity } from '@promethea/cpp-protocol';
import type { Subscriber } from './subscriber.js';
import type { ThreadLink } from './thread-link.js';

/** How long a CPP_TYPING `typing: true` holds without being sent again (docs/PROTOCOL.md §29.9). */
export const TYPING_TIMEOUT_MS = 6000;
/** How often a server tells the others again who has the thread open through it, while anybody does. */
export const PRESENCE_REFRESH_MS = 10_000;
/** A server that has not told for this long is taken for dead: who was present through it is dropped. */
export const PRESENCE_EXPIRY_MS = 3 * PRESENCE_REFRESH_MS;

interface Here {
  did: string;
  typing: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Who has one thread open (docs/PROTOCOL.md §29.9): this server's subscribers, and what the other servers holding
 * the thread said of theirs. Each server tells the others its own part when it changes (and again every
 * PRESENCE_REFRESH_MS while another server holds it too, so that one that dies is forgotten); the subscribers that asked for
 * it get the whole as CPP_PRESENCE when it changes. Made by the first subscriber: a thread nobody shares costs a map.
 */
export class ThreadPresence {
  private readonly here = new Map<Subscriber, Here>();
  /** The subscribers that asked for CPP_PRESENCE. */
  private readonly watchers = new Set<Subscriber>();
  private readonly elsewhere = new Map<string, { present: PresentIdentity[]; at: number }>();
  /** What this server last told the others, and what its watchers last got, encoded. */
  private told = '[]';
  private shown = '';
  private refresh: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly threadId: string,
    private readonly link: ThreadLink,
  ) {}

  /** A subscriber counts as present from its subscription on; the others are asked who is there with it. */
  joined(subscriber: Subscriber): void {
    const did = subscriber.identity?.did;
    if (did === undefined || this.here.has(subscriber)) return;
    const first = this.here.size === 0;
    this.here.set(subscriber, { did, typing: undefined });
    this.changed(first);
  }

  left(subscriber: Subscriber): void {
    const here = this.here.get(subscriber);
    this.watchers.delete(subscriber);
    if (!here) return;
    clearTimeout(here.typing);
    this.here.delete(subscriber);
    this.changed(false);
  }

  /** From now on `subscriber` gets CPP_PRESENCE, starting with who is there now. */
  watch(subscriber: Subscriber): void {
    if (!this.here.has(subscriber)) return;
    this.watchers.add(subscriber);
    subscriber.send(this.frame(this.shown));
  }

  typing(subscriber: Subscriber, typing: boolean): void {
    const here = this.here.get(subscriber);
    if (!here) return;
    clearTimeout(here.typing);
    here.typing = typing ? setTimeout(() => this.typing(subscriber, false), TYPING_TIMEOUT_MS) : undefined;
    here.typing?.unref();
    this.changed(false);
  }

  /** What another server said of its subscribers; `ask`: it has just begun to hold the thread, and waits for ours. */
  remote(instance: string, present: PresentIdentity[], ask: boolean, now = Date.now()): void {
    if (present.length === 0) this.elsewhere.delete(instance);
    else this.elsewhere.set(instance, { present, at: now });
    if (ask && this.here.size > 0) this.link.presence(this.local(), false);
    this.changed(false);
  }

  /** The thread was deleted: nobody is here any more. */
  clear(): void {
    for (const subscriber of [...this.here.keys()]) this.left(subscriber);
  }

  /** The engine is let go of: what the others said is forgotten, and nothing is told any more. */
  close(): void {
    this.clear();
    this.elsewhere.clear();
    this.keepTelling();
  }

  private changed(ask: boolean): void {
    const local = this.local();
    const told = JSON.stringify(local);
    if (told !== this.told || ask) {
      this.told = told;
      this.link.presence(local, ask);
    }
    this.keepTelling();
    const shown = JSON.stringify(this.merged(local));
    if (shown === this.shown) return;
    this.shown = shown;
    if (this.watchers.size === 0) return;
    const frame = this.frame(shown);
    for (const watcher of this.watchers) watcher.send(frame);
  }

  /**
   * Only while another server has said it holds the thread: it is the one that needs this server's word again (and
   * this server the one that must notice when it stops). A thread nobody else holds costs no message a period.
   */
  private keepTelling(): void {
    const needed = this.elsewhere.size > 0;
    if (needed && !this.refresh) {
      this.refresh = setInterval(() => this.tick(Date.now()), PRESENCE_REFRESH_MS);
      this.refresh.unref();
    } else if (!needed && this.refresh) {
      clearInterval(this.refresh);
      this.refresh = undefined;
    }
  }

  /** Tells the others again, and forgets the servers that stopped telling. */
  tick(now: number): void {
    if (this.here.size > 0) this.link.presence(this.local(), false);
    for (const [instance, { at }] of this.elsewhere) if (now - at > PRESENCE_EXPIRY_MS) this.elsewhere.delete(instance);
    this.changed(false);
  }

  private local(): PresentIdentity[] {
    const typing = new Map<string, boolean>();
    for (const { did, typing: timer } of this.here.values()) typing.set(did, typing.get(did) === true || !!timer);
    return [...typing].map(([did, typing]) => ({ did, typing })).sort(byDid);
  }

  private merged(local: PresentIdentity[]): PresentIdentity[] {
    const typing = new Map(local.map(({ did, typing }) => [did, typing]));
    for (const { present } of this.elsewhere.values())
      for (const { did, typing: remote } of present) typing.set(did, typing.get(did) === true || remote);
    return [...typing].map(([did, typing]) => ({ did, typing })).sort(byDid);
  }

  private frame(shown: string): string {
    return encodeServerFrame('CPP_PRESENCE', {
      threadId: this.threadId,
      present: JSON.parse(shown || '[]') as PresentIdentity[],
    });
  }
}

function byDid(a: PresentIdentity, b: PresentIdentity): number {
  return a.did < b.did ? -1 : a.did > b.did ? 1 : 0;
}
