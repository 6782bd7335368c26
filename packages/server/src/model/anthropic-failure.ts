import Anthropic from '@anthropic-ai/sdk';
import { lineTooLong } from './line-too-long-error.js';
import type { ProviderError } from './provider-error.js';
import { connectionFailure, malformedStream, statusFailure, streamedFailure } from './upstream-failures.js';

/** The HTTP status Anthropic documents for each error type, for error events that arrive inside a 200 stream. */
const STATUS_OF_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** Maps the Anthropic SDK's errors; anything else is left to the generation's default (a network failure). */
export function describeAnthropicFailure(vendor: string, error: unknown, apiKey: string | undefined): ProviderError | undefined {
  if (error instanceof Anthropic.APIConnectionError) return connectionFailure(vendor, error.cause ?? error);
  if (error instanceof Anthropic.APIError) {
    const message = error.apiMessage ?? error.message;
    if (error.status !== undefined) return statusFailure(vendor, error.status, message, apiKey);
    return streamedFailure(vendor, message, apiKey, error.type ? STATUS_OF_ERROR_TYPE[error.type] : undefined);
  }
  if (error instanceof SyntaxError) return malformedStream(vendor, 'an event whose data is not JSON', error);
  const tooLong = lineTooLong(error);
  return tooLong ? malformedStream(vendor, tooLong.message, tooLong) : undefined;
}
