import type { SpanExporter } from '@opentelemetry/sdk-trace-node';

/** A started OpenTelemetry SDK: `shutdown` flushes the spans not yet exported. */
export interface TracingSdk {
  exporters: string[];
  shutdown(): Promise<void>;
}

const SDK_PACKAGES = '@opentelemetry/sdk-trace-node @opentelemetry/exporter-trace-otlp-proto @opentelemetry/resources';

/**
 * Whether the standard OTEL_* environment asks for traces. Tracing is off by default (the spec's default
 * exporter, otlp, would send to a collector nobody runs): it is on when OTEL_TRACES_EXPORTER names an exporter
 * or an OTLP endpoint is given, unless OTEL_SDK_DISABLED=true.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = exporterNames(env);
  if (env.OTEL_TRACES_EXPORTER?.trim()) return exporters.length > 0;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts the OpenTelemetry SDK as the OTEL_* environment says, and registers it with the API, where the server's
 * tracer finds it; `undefined` when tracing is not asked for. The SDK is loaded only then: its packages are
 * optional dependencies. The exporters read their own settings (OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, …), the
 * provider its sampler (OTEL_TRACES_SAMPLER) and the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<TracingSdk | undefined> {
  if (!tracingRequested(env)) return undefined;
  const exporters = exporterNames(env);
  const [{ NodeTracerProvider, BatchSpanProcessor }, resources] = await Promise.all([
    loadOptional(() => import('@opentelemetry/sdk-trace-node')),
    loadOptional(() => import('@opentelemetry/resources')),
  ]);
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': 'cpp-server' }))
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const spanProcessors = await Promise.all(
    exporters.map(async (name) => new BatchSpanProcessor(await createExporter(name, env))),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors });
  provider.register();
  return { exporters, shutdown: () => provider.shutdown() };
}

function exporterNames(env: NodeJS.ProcessEnv): string[] {
  return (env.OTEL_TRACES_EXPORTER ?? 'otlp')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '' && name !== 'none');
}

async function createExporter(name: string, env: NodeJS.ProcessEnv): Promise<SpanExporter> {
  switch (name) {
    case 'otlp': {
      const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
      if (protocol !== 'http/protobuf')
        throw new Error(`cpp-server exports OTLP over http/protobuf only, not ${protocol}`);
      const { OTLPTraceExporter } = await loadOptional(() => import('@opentelemetry/exporter-trace-otlp-proto'));
      return new OTLPTraceExporter();
    }
    case 'console': {
      const { ConsoleSpanExporter } = await loadOptional(() => import('@opentelemetry/sdk-trace-node'));
      return new ConsoleSpanExporter();
    }
    default:
      throw new Error(`OTEL_TRACES_EXPORTER=${name} is not supported by cpp-server; use otlp, console or none`);
  }
}

async function loadOptional<Module>(load: () => Promise<Module>): Promise<Module> {
  try {
    return await load();
  } catch (error) {
    const missing = (error as { code?: unknown }).code === 'ERR_MODULE_NOT_FOUND';
    if (!missing) throw error;
    throw new Error(
      `tracing is asked for by OTEL_* variables, but the OpenTelemetry SDK is not installed: npm install ${SDK_PACKAGES}`,
      { cause: error },
    );
  }
}
