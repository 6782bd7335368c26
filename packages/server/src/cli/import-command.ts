import { readFile } from 'node:fs/promises';
import { CPPError, ImportFormatSchema, isDid, recogniseImportFormat, type ImportFormat } from '@promethea/cpp-protocol';
import { Command, Option } from 'commander';
import { importThreads } from '../threads/thread-importer.js';
import { openStore, type DeploymentFlags } from './deployment-flags.js';

interface ImportFlags extends DeploymentFlags {
  did: string;
  format?: ImportFormat;
}

/**
 * `cpp-server import FILE --did DID`: imports a CPP JSON export or a ChatGPT `conversations.json` into the store the
 * flags name, as threads of that DID, all or none. For files larger than a frame (the protocol's CPP_THREAD_IMPORT
 * is bounded by the frame limit); the operator's import knows no per-identity limit.
 */
export function importCommand(): Command {
  return new Command('import')
    .description('import a CPP JSON export or a ChatGPT conversations.json as threads of --did, and exit')
    .argument('<file>', 'the JSON file')
    .requiredOption('--did <did>', 'the identity that will own the threads')
    .addOption(
      new Option('--format <format>', 'what the file is (default: recognised from its content)').choices(
        ImportFormatSchema.options,
      ),
    )
    .action(async (file: string, _options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<ImportFlags>();
      if (!isDid(flags.did)) throw new Error(`--did ${flags.did} is not a DID (did:<method>:<id>)`);
      const document: unknown = JSON.parse(await readFile(file, 'utf8'));
      const format = flags.format ?? recogniseImportFormat(document);
      if (format === undefined)
        throw new Error(
          `${file} is neither a CPP thread export nor a ChatGPT conversations.json: say which with --format`,
        );
      const { store, description } = await openStore(flags, () => {});
      try {
        const threads = await importThreads(store, flags.did, format, document, {
          maxThreadsPerDid: 0,
          maxNodesPerThread: 0,
          maxThreadBytes: 0,
          maxPromptLength: 0,
        });
        console.log(
          `imported ${threads.length} thread${threads.length === 1 ? '' : 's'} (${format}) for ${flags.did} into ${description}`,
        );
        for (const { threadId, title, nodeCount } of threads)
          console.log(`  ${threadId}  ${nodeCount} messages  ${title}`);
      } catch (error) {
        if (CPPError.isInstance(error))
          throw new Error(`${file}: ${error.message.replace(/^payload\.document: /, '')}; nothing was imported`);
        throw error;
      } finally {
        await store.close();
      }
    });
}
