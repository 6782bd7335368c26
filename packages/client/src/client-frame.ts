import type { ClientFrame, ClientFrameType, ClientPayload } from '@promethea/cpp-protocol';

/** Builds client frames, each with an id unique on this connection so that errors about it can name it. */
export class ClientFrameFactory {
  private sent = 0;

  create<Type extends ClientFrameType>(
    type: Type,
    payload: ClientPayload<Type>,
  ): Extract<ClientFrame, { type: Type }> & { id: string } {
    this.sent += 1;
    return { type, id: `frame_${this.sent}`, timestamp: Date.now(), payload } as Extract<
      ClientFrame,
      { type: Type }
    > & { id: string };
  }
}
