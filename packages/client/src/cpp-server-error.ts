import { CPPError, type ErrorCode, type ErrorFrame } from '@promethea/cpp-protocol';

type ErrorDetails = Omit<ErrorFrame['payload'], 'code' | 'message'>;

/**
 * A CPP_ERROR frame (or a server frame that failed validation) as an error the caller can throw and catch. It is
 * a `CPPError`, so `CPPError.isInstance` recognises it, and it keeps what the frame said it concerns.
 */
export class CPPServerError extends CPPError {
  readonly refId: string | undefined;
  readonly refType: string | undefined;
  readonly threadId: string | undefined;
  readonly nodeId: string | undefined;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(code, message);
    this.refId = details.refId;
    this.refType = details.refType;
    this.threadId = details.threadId;
    this.nodeId = details.nodeId;
  }

  static fromFrame({ code, message, ...details }: ErrorFrame['payload']): CPPServerError {
    return new CPPServerError(code as ErrorCode, message, details);
  }
}
