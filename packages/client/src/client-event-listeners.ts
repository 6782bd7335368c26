import type { CPPClientEvents } from './client-events.js';

export type EventName = keyof CPPClientEvents;

interface Registration {
  listener: unknown;
  once: boolean;
}

/**
 * The client's listeners, by event, called in the order they were added (as Node's EventEmitter does, without its
 * 2 KB gzip in a page's bundle). A listener added twice is called twice; `off` removes every registration of it,
 * or every listener of the event when none is named.
 */
export class ClientEventListeners {
  private readonly registrations = new Map<EventName, Registration[]>();

  add<Event extends EventName>(event: Event, listener: CPPClientEvents[Event], once: boolean): void {
    this.registrations.set(event, [...(this.registrations.get(event) ?? []), { listener, once }]);
  }

  remove<Event extends EventName>(event: Event, listener?: CPPClientEvents[Event]): void {
    this.keep(event, (registration) => listener !== undefined && registration.listener !== listener);
  }

  emit<Event extends EventName>(event: Event, ...args: Parameters<CPPClientEvents[Event]>): void {
    const registered = this.registrations.get(event);
    if (!registered) return;
    this.keep(event, (registration) => !registration.once);
    for (const { listener } of registered)
      (listener as (...values: Parameters<CPPClientEvents[Event]>) => void)(...args);
  }

  private keep(event: EventName, kept: (registration: Registration) => boolean): void {
    const remaining = (this.registrations.get(event) ?? []).filter(kept);
    if (remaining.length > 0) this.registrations.set(event, remaining);
    else this.registrations.delete(event);
  }
}
