/**
 * Waits for this server's copy of a thread to show a version. A frame run on another server (where the thread's
 * generation streams) is answered with the version it left the thread at, and that answer can outrun the change
 * itself, which comes as a message of its own: the client's next frame must find the change applied here, as it
 * would on the server that ran the frame (PROTOCOL.md §15.1).
 */
export class CopyCatchUp {
  private readonly waits = new Set<{ version: number; done(): void }>();

  constructor(
    private readonly copy: { readonly version: number },
    /** Reads the thread from the store, for a change whose message is late or lost; reports its own failure. */
    private readonly reload: () => Promise<void>,
    private readonly patienceMs: number,
  ) {}

  /** Resolves once the copy shows `version` or later; after `patienceMs` without it, once the copy is reloaded. */
  reach(version: number): Promise<void> {
    if (this.copy.version >= version) return Promise.resolve();
    return new Promise((resolve) => {
      const wait = {
        version,
        done: () => {
          clearTimeout(timer);
          this.waits.delete(wait);
          resolve();
        },
      };
      // A reload that failed left the copy as it was: the frame runs on it, as it would have without the wait.
      const timer = setTimeout(() => void this.reload().then(wait.done), this.patienceMs);
      this.waits.add(wait);
    });
  }

  /** The copy moved on (a change applied, a reload): ends the waits it satisfies. */
  moved(): void {
    for (const wait of this.waits) if (this.copy.version >= wait.version) wait.done();
  }

  /** The thread is gone: nothing will move the copy again. */
  endAll(): void {
    for (const wait of this.waits) wait.done();
  }
}
