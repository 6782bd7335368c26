/** A connection's view of a thread: where the thread's frames go. */
export interface Subscriber {
  send(text: string): void;
}
