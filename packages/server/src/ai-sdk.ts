// @promethea/cpp-server/ai-sdk: the AI SDK (an optional peer dependency) behind a ModelProvider.
export * from './model/providers/ai-sdk-provider.js';
