// @promethea/cpp-server/anthropic: loads Anthropic's SDK, so the root import does not.
export { AnthropicProvider } from './model/anthropic-provider.js';
