/**
 * The human-readable message of an error body, in the shapes the supported vendors use: OpenAI and Anthropic
 * `{"error": {"message": "..."}}`, Ollama `{"error": "..."}`, some proxies `{"message": "..."}`; otherwise the body
 * text itself.
 */
export function vendorErrorMessage(body: string): string {
  try {
    return messageOf(JSON.parse(body)) ?? body;
  } catch {
    return body;
  }
}

function messageOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.error === 'string') return record.error;
  if (typeof record.message === 'string') return record.message;
  return messageOf(record.error);
}
