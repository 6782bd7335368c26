// @promethea/cpp-server/anthropic: loads Anthropic's SDK, so the root import does not.
export { AnthropicProvider } from './model/providers/anthropic-provider.js';
