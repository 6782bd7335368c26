#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { staticDir as webUi } from '@promethea/cpp-web';
import { Command, Option } from 'commander';
import { CPPServer } from '../cpp-server.js';
import { LOG_LEVELS, createLogger, type LogLevel } from '../observability/logger.js';
import { startTracing } from '../observability/tracing-sdk.js';
import {
  addDeploymentFlags,
  openCluster,
  openStore,
  withoutPassword,
  type DeploymentFlags,
  UNSHARED_TICKETS_WARNING,
} from './deployment-flags.js';
import { importCommand } from './import-command.js';
import { migrateCommand } from './migrate-command.js';
import { CLAIMED_AUTH_WARNING, accessOptionsOf, addAccessFlags, type AccessFlags } from './access-flags.js';
import { descriptorWarning, openFilesLimit } from './descriptor-limit.js';
import { integer, onOff } from './argument-parsers.js';
import { readMcpConfigFile } from './mcp-config-file.js';
import { addModelFlags, configuredModels, type ModelFlags } from './model-flags.js';

interface CliOptions extends AccessFlags, DeploymentFlags, ModelFlags {
  port: number;
  host?: string;
  db: string;
  maxFrameBytes?: number;
  persistIntervalMs?: number;
  chunkIntervalMs?: number;
  summaryTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  compressionThresholdBytes?: number;
  logLevel: LogLevel;
  logPrompts: boolean;
  metrics: boolean;
  ui: boolean;
  staticDir?: string;
  mcpConfig?: string;
}

/** The web UI, a dependency; in the repository it is apps/web, served once built. */
const BUNDLED_UI = existsSync(join(webUi, 'index.html')) ? webUi : undefined;

const program = new Command('cpp-server')
  .description('Serve the Conversational Pivot Protocol (CPP v1.0.0) over WebSocket, with its web UI, on one port.')
  .addOption(new Option('-p, --port <port>', 'port to listen on').env('PORT').default(8080).argParser(integer))
  .addOption(new Option('--host <host>', 'interface to listen on (default: all)').env('HOST'))
  .addOption(new Option('--db <path>', 'SQLite database file').env('CPP_DB').default('./data/cpp.sqlite'))
  .addOption(
    new Option('--max-frame-bytes <bytes>', 'largest accepted frame').env('CPP_MAX_FRAME_BYTES').argParser(integer),
  )
  .addOption(
    new Option('--persist-interval-ms <ms>', 'how often streamed text is saved while it streams (default 200)')
      .env('CPP_PERSIST_INTERVAL_MS')
      .argParser(integer),
  )
  .addOption(
    new Option(
      '--chunk-interval-ms <ms>',
      'shortest time between two chunks of one answer; sooner text is merged (default 30; 0: every delta)',
    )
      .env('CPP_CHUNK_INTERVAL_MS')
      .argParser(integer),
  )
  .addOption(
    new Option(
      '--summary-timeout-ms <ms>',
      "how long a summary of what a model's window leaves out may take before the answer goes on without it (default 30000; 0: no limit)",
    )
      .env('CPP_SUMMARY_TIMEOUT_MS')
      .argParser(integer),
  )
  .addOption(
    new Option('--heartbeat-interval-ms <ms>', 'how often connections are pinged (default 30000; 0: never)')
      .env('CPP_HEARTBEAT_INTERVAL_MS')
      .argParser(integer),
  )
  .addOption(
    new Option(
      '--compression-threshold-bytes <bytes>',
      'frames of at least this size go compressed to clients that offer permessage-deflate (default 65536; 0: never)',
    )
      .env('CPP_COMPRESSION_THRESHOLD_BYTES')
      .argParser(integer),
  )
  .addOption(
    new Option('--static-dir <dir>', 'serve this directory at / instead of the bundled web UI').env('CPP_STATIC_DIR'),
  )
  .addOption(
    new Option('--log-level <level>', 'least severe level logged (JSON lines on stdout)')
      .env('LOG_LEVEL')
      .default('info')
      .choices(LOG_LEVELS),
  )
  .addOption(
    new Option('--log-prompts [enabled]', 'also log prompt and answer text: user data, for debugging only')
      .env('CPP_LOG_PROMPTS')
      .preset('true')
      .default(false)
      .argParser(onOff),
  )
  .addOption(
    new Option(
      '--mcp-config <file>',
      'MCP servers whose tools the models may call: a JSON file { "mcpServers": { … } }',
    ).env('CPP_MCP_CONFIG'),
  )
  .option('--no-metrics', 'do not serve Prometheus metrics at /metrics')
  .option('--no-ui', 'do not serve the web UI');
addModelFlags(program);
addDeploymentFlags(program);
program.addCommand(migrateCommand());
program.addCommand(importCommand());
addAccessFlags(program);

async function main(options: CliOptions): Promise<void> {
  const { models, defaultModel, descriptions } = await configuredModels(options);
  const mcpServers = options.mcpConfig === undefined ? undefined : await readMcpConfigFile(options.mcpConfig);
  const staticDir = options.ui ? (options.staticDir ?? BUNDLED_UI) : undefined;
  if (options.auth === 'claimed') console.error(CLAIMED_AUTH_WARNING);
  const descriptors = descriptorWarning(openFilesLimit(), options.maxSocketsPerIp);
  if (descriptors) console.error(descriptors);
  const access = await accessOptionsOf(options);
  const logger = createLogger(options.logLevel);
  const tracing = await startTracing();
  const { store, description: storeDescription } = await openStore(options, (message) => logger.info(message));
  const cluster = await openCluster(options);
  if (cluster && !options.attachmentSecret) console.error(UNSHARED_TICKETS_WARNING);
  const clusterDescription = cluster
    ? `Redis at ${withoutPassword(options.redisUrl!)}, prefix ${options.redisPrefix}, instance ${cluster.instanceId}`
    : 'none (this server runs alone)';
  const server = new CPPServer({
    port: options.port,
    host: options.host,
    store,
    cluster,
    models,
    defaultModel,
    ...(mcpServers ? { mcpServers } : {}),
    maxFrameBytes: options.maxFrameBytes,
    persistIntervalMs: options.persistIntervalMs,
    chunkIntervalMs: options.chunkIntervalMs,
    summaryTimeoutMs: options.summaryTimeoutMs,
    heartbeatIntervalMs: options.heartbeatIntervalMs,
    compressionThresholdBytes: options.compressionThresholdBytes,
    staticDir,
    logger,
    logPrompts: options.logPrompts,
    metrics: options.metrics ? undefined : false,
    ...(options.attachmentSecret ? { attachments: { ticketSecret: options.attachmentSecret } } : {}),
    ...access,
  });
  await server.ready;

  const httpUrl = server.url.replace(/^ws/, 'http').replace(/\/v1\/cpp\/session$/, '/');
  console.log(`cpp-server listening on ${server.url}`);
  console.log(`  web UI:  ${staticDir ? httpUrl : 'not served (build apps/web or pass --static-dir)'}`);
  console.log(`  model:   ${descriptions.join('\n           ')}`);
  console.log(
    `  auth:    ${options.auth === 'did-key' ? 'did-key (every connection proves its DID)' : 'claimed (NOT proven: development only)'}`,
  );
  if (mcpServers) console.log(`  tools:   MCP servers ${Object.keys(mcpServers).join(', ')} (${options.mcpConfig})`);
  console.log(`  store:   ${storeDescription}`);
  console.log(`  cluster: ${clusterDescription}`);
  console.log(
    `  ops:     ${httpUrl}healthz, ${httpUrl}readyz${options.metrics ? `, ${httpUrl}metrics` : ''}${tracing ? `; traces to ${tracing.exporters.join(', ')}` : ''}`,
  );
  if (!options.modelsFile && options.model === 'demo')
    console.log(
      '  note:    this is the demo model, a stand-in that streams placeholder text; see "Use your model" in the README.',
    );
  logger.info(
    {
      url: server.url,
      model: descriptions.join('; '),
      store: storeDescription,
      cluster: clusterDescription,
      metrics: options.metrics,
      tracing: tracing?.exporters ?? [],
    },
    'cpp-server listening',
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: interrupting running answers, closing connections');
    server
      .close()
      .then(() => cluster?.close())
      .then(() => store.close())
      .then(() => tracing?.shutdown())
      .then(
        () => process.exit(0),
        (error: unknown) => {
          logger.fatal({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

program.action((options: CliOptions) => main(options));
program.parseAsync().catch((error: unknown) => {
  console.error(`cpp-server: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
