import { z } from 'zod';
import { TimestampSchema } from '../envelope.js';
import { SyncGraphFrameSchema } from '../frames/server-frames.js';
import { THREAD_EXPORT_FORMAT, THREAD_EXPORT_FORMAT_VERSION, type ThreadExport } from './thread-export.js';

/** A `ThreadExport`, checked: what an import reads, and the JSON Schema published for the format. */
export const ThreadExportSchema: z.ZodType<ThreadExport> = z.object({
  format: z.literal(THREAD_EXPORT_FORMAT),
  formatVersion: z.literal(THREAD_EXPORT_FORMAT_VERSION),
  exportedAt: TimestampSchema,
  thread: SyncGraphFrameSchema.shape.payload,
  files: z.record(z.string().regex(/^[0-9a-f]{64}$/), z.base64()).optional(),
});
