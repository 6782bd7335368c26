/**
 * Admission's answer to a request that may not connect: an HTTP status and a plain-text body saying why. The
 * transport sends it as the upgrade's HTTP answer, or, for a WebSocket an application upgraded itself and handed to
 * `CPPServer.accept`, as the close code 4000 + status with the body as the reason (docs/PROTOCOL.md §18.1).
 */
export class UpgradeRefusal {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {}
}
