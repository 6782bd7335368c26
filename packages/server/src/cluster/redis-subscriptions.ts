import type { Redis } from 'ioredis';
import type { Subscription, ThreadMessage } from './cluster-transport.js';
import { decodePublished } from './redis-messages.js';

type Listener = (message: ThreadMessage) => void;

/**
 * The channels an instance listens to, over one connection in subscriber mode. A channel is subscribed while at least
 * one listener wants it; messages this instance published itself are dropped here.
 */
export class RedisSubscriptions {
  private readonly listeners = new Map<string, Set<Listener>>();
  /** Pending SUBSCRIBE of a channel: a second listener waits for the same one. */
  private readonly subscribing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly connection: Redis,
    private readonly instanceId: string,
    private readonly onError: (error: unknown) => void,
    /**
     * Called when the connection is back (ioredis subscribes to the channels again): what was published meanwhile is
     * lost.
     */
    private readonly onReconnect: () => void,
  ) {
    connection.on('message', (channel: string, text: string) => this.deliver(channel, text));
    // Connected before this is built: every later 'ready' is a reconnection.
    connection.on('ready', () => this.onReconnect());
  }

  async subscribe(channel: string, listener: Listener): Promise<Subscription> {
    let listeners = this.listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.listeners.set(channel, listeners);
      const subscribed = this.connection.subscribe(channel).finally(() => this.subscribing.delete(channel));
      this.subscribing.set(channel, subscribed);
    }
    listeners.add(listener);
    await this.subscribing.get(channel);
    return { unsubscribe: () => this.unsubscribe(channel, listener) };
  }

  private async unsubscribe(channel: string, listener: Listener): Promise<void> {
    const listeners = this.listeners.get(channel);
    if (!listeners?.delete(listener) || listeners.size > 0) return;
    this.listeners.delete(channel);
    await this.connection.unsubscribe(channel);
  }

  private deliver(channel: string, text: string): void {
    const listeners = this.listeners.get(channel);
    if (!listeners) return;
    try {
      const { origin, ...message } = decodePublished(text);
      if (origin === this.instanceId) return;
      for (const listener of listeners) listener(message);
    } catch (error) {
      this.onError(error);
    }
  }
}
