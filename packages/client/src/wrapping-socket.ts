import type { WebSocketLike } from './web-socket-like.js';

type Listeners = {
  open: (() => void)[];
  message: ((event: { data: unknown }) => void)[];
  close: ((event: { code: number; reason: string }) => void)[];
  error: (() => void)[];
};

/**
 * A session socket over another one, which decides which of the inner socket's events its own listeners hear
 * (a subclass listens to `socket` and calls `emit`). Sending and closing go to the inner socket.
 */
export abstract class WrappingSocket implements WebSocketLike {
  private readonly listeners: Listeners = { open: [], message: [], close: [], error: [] };

  constructor(protected socket: WebSocketLike) {}

  send(data: string): void {
    this.socket.send(data);
  }

  close(code?: number, reason?: string): void {
    this.socket.close(code, reason);
  }

  addEventListener(type: 'open', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: 'error', listener: () => void): void;
  addEventListener(type: keyof Listeners, listener: (event: never) => void): void {
    (this.listeners[type] as ((event: never) => void)[]).push(listener);
  }

  protected emit<Type extends keyof Listeners>(type: Type, event: Parameters<Listeners[Type][number]>[0]): void {
    for (const listener of this.listeners[type]) (listener as (event: unknown) => void)(event);
  }
}
