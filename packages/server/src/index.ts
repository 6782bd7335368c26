// The root import loads no database driver, Redis client, vendor SDK or logger: those adapters are subpath
// exports (./sqlite, ./postgres, ./redis, ./anthropic, ./ai-sdk, ./logger), each loading its own dependency.
export {
  CPPServer,
  DEFAULT_CHUNK_INTERVAL_MS,
  DEFAULT_PERSIST_INTERVAL_MS,
  type CPPServerOptions,
  type CPPServerEvents,
  type OperationEvent,
  type ConnectionEvent,
} from './cpp-server.js';
export { PivotContext, type PivotRequest } from './engine/pivot-context.js';
export type { OperationContext, HookedFrameType } from './engine/operation-context.js';
export { DEFAULT_BACKPRESSURE_LIMITS, type BackpressureLimits } from './session/backpressure.js';
export type { Identity } from './engine/identity.js';
export type { AccessOptions } from './auth/access-options.js';
export type { AuthOption, IdentityVerifier } from './auth/auth-mode.js';
export { DEFAULT_LIMITS, type ServerLimits } from './auth/limits/server-limits.js';
export { MemoryReplayCache, type ReplayCache } from './auth/replay-cache.js';
export { UpgradeRefusal } from './auth/upgrade-refusal.js';
export type { CPPSocket, SocketHandlers } from './transport/cpp-socket.js';
export type { HostedSocket } from './transport/hosted-socket.js';
export type {
  ConversationStore,
  StoredThread,
  ThreadRecord,
  CommitMeta,
  StreamedText,
} from './store/conversation-store.js';
export { StoreConflictError } from './store/store-conflict-error.js';
export { MemoryStore } from './store/memory-store.js';
export type {
  ClusterTransport,
  ClusterHandlers,
  FrameMessage,
  PresenceMessage,
  ThreadMessage,
  ForwardedCommand,
  CommandReply,
  SentCommand,
  Subscription,
} from './cluster/cluster-transport.js';
export { LocalCluster, LocalClusterTransport } from './cluster/local-cluster.js';
export { DEFAULT_CLUSTER_TIMINGS, type ClusterTimings } from './cluster/cluster-coordinator.js';
export type {
  ModelProvider,
  ModelRequest,
  ModelMessage,
  ModelStreamPart,
  ModelTool,
  ModelToolCall,
  ToolCallStreamPart,
} from './model/model-provider.js';
export { ModelCatalog, type ContextStrategy, type ModelEntry } from './model/model-catalog.js';
export { ProviderError } from './model/provider-error.js';
export { DemoProvider, demoModels, type DemoProviderOptions } from './model/demo-provider.js';
export { DEMO_TOOLS_MODEL, DemoToolsProvider } from './model/demo-tools-provider.js';
export { demoTools, type DemoToolsOptions } from './tools/demo-tools.js';
export type { JsonObjectSchema, ServerTool, ServerTools, ToolContext } from './tools/server-tool.js';
export { type McpServerConfig, type McpServers, McpConfigFileSchema } from './tools/mcp-config.js';
export { DEFAULT_TOOL_LIMITS, type ToolLimits } from './tools/tool-registry.js';
export { createModelProvider, describeProvider } from './model/provider-factory.js';
export { PROVIDER_DEFAULTS, PROVIDER_KINDS, type ProviderConfig, type ProviderKind } from './model/provider-config.js';
export { OpenAICompatibleProvider } from './model/providers/openai-compatible-provider.js';
export { OllamaProvider } from './model/providers/ollama-provider.js';
export type { ObservabilityOptions } from './observability/observability-options.js';
export type {
  ServerObserver,
  ObservedConnection,
  SentError,
  PivotStep,
  PivotObservation,
  ObservedPivot,
  ErrorContext,
  GenerationStart,
  GenerationResult,
  GenerationObservation,
  StoreOperation,
  StoreOperationTiming,
} from './observability/server-observer.js';
export type { ReadinessReport, CheckStatus } from './observability/readiness.js';
