import type { DecodeResult, ServerFrame } from '@promethea/cpp-protocol';
import type { SocketOpener } from './web-socket-like.js';

/** What an entry point gives the platform-neutral client: how to open a session socket, and how to read a frame. */
export interface ClientPlatform {
  openSocket: SocketOpener;
  /**
   * Node: the protocol's schemas check every field (`decodeServerFrame`). Browsers: the envelope only
   * (`decodeServerFrameEnvelope`), which keeps zod out of a page's bundle (README, "In a browser").
   */
  decodeServerFrame(text: string): DecodeResult<ServerFrame>;
  /** Node: reads a file named by its path, for a prompt's attachments. Browsers have none: a path is refused. */
  readFile?(path: string): Promise<{ name: string; bytes: Uint8Array }>;
}
