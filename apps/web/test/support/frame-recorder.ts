import type { Page } from 'playwright-core';

export interface RecordedFrame {
  type: string;
  payload: Record<string, unknown>;
}

/** The CPP frames a page sends and receives on its session sockets, parsed, in order, and the sockets' URLs. */
export class FrameRecorder {
  readonly sent: RecordedFrame[] = [];
  readonly received: RecordedFrame[] = [];
  readonly socketUrls: string[] = [];
  private readonly waiting = new Set<{
    matches: (frame: RecordedFrame) => boolean;
    resolve: (frame: RecordedFrame) => void;
  }>();

  constructor(page: Page) {
    page.on('websocket', (socket) => {
      this.socketUrls.push(socket.url());
      socket.on('framesent', (frame) => this.sent.push(JSON.parse(String(frame.payload)) as RecordedFrame));
      socket.on('framereceived', (frame) => this.receive(JSON.parse(String(frame.payload)) as RecordedFrame));
    });
  }

  /** The first frame received that `matches`: at once when it has come, or as it comes (the test's timeout ends the wait). */
  receivedFrame(matches: (frame: RecordedFrame) => boolean): Promise<RecordedFrame> {
    const frame = this.received.find(matches);
    if (frame) return Promise.resolve(frame);
    return new Promise((resolve) => this.waiting.add({ matches, resolve }));
  }

  private receive(frame: RecordedFrame): void {
    this.received.push(frame);
    for (const wait of this.waiting) {
      if (!wait.matches(frame)) continue;
      this.waiting.delete(wait);
      wait.resolve(frame);
    }
  }

  lastSent(type: string): RecordedFrame | undefined {
    return this.sent.findLast((frame) => frame.type === type);
  }

  lastReceived(type: string): RecordedFrame | undefined {
    return this.received.findLast((frame) => frame.type === type);
  }

  /** The text the server streamed into `nodeId`: what the model wrote, before any rendering. */
  streamedText(nodeId: string): string {
    return this.received
      .filter((frame) => frame.type === 'CPP_STREAM_CHUNK' && frame.payload.nodeId === nodeId)
      .map((frame) => String(frame.payload.delta))
      .join('');
  }
}
