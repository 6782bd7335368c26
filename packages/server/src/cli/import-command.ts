import { ImportDocumentError, ImportFormatSchema, isDid, type ImportFormat } from '@promethea/cpp-protocol';
import { Command, Option } from 'commander';
import { JsonDocumentError } from '../threads/json-array-items.js';
import { importThreadStream, UnrecognisedImportError } from '../threads/thread-importer.js';
import { openStore, type DeploymentFlags, type OpenedStore } from './deployment-flags.js';
import { ImportProgress } from './import-progress.js';
import { openImportReader } from './import-reader.js';
import { type ImportArchive, openImportArchive } from './import-source.js';

interface ImportFlags extends DeploymentFlags {
  did: string;
  format?: ImportFormat;
}

/**
 * `cpp-server import FILE --did DID`: imports a CPP JSON export, a ChatGPT `conversations.json` or a ChatGPT data
 * export's .zip as downloaded into the store the flags name, as threads of that DID, all or none. The file is read
 * as a stream, element by element, by a thread of its own, and written in batches inside one transaction, so a file
 * of gigabytes needs no more memory than a few batches (issue 37); a terminal shows its progress. For files larger than a frame (the
 * protocol's CPP_THREAD_IMPORT is bounded by the frame limit); the operator's import knows no per-identity limit.
 */
export function importCommand(): Command {
  return new Command('import')
    .description(
      'import a CPP JSON export, a ChatGPT conversations.json or a ChatGPT export .zip as threads of --did, and exit',
    )
    .argument('<file>', 'the JSON file, or the .zip of a ChatGPT data export')
    .requiredOption('--did <did>', 'the identity that will own the threads')
    .addOption(
      new Option('--format <format>', 'what the file is (default: recognised from its content)').choices(
        ImportFormatSchema.options,
      ),
    )
    .action(async (file: string, _options: unknown, command: Command) => {
      const flags = command.optsWithGlobals<ImportFlags>();
      if (!isDid(flags.did)) throw new Error(`--did ${flags.did} is not a DID (did:<method>:<id>)`);
      const source = await openImportReader(file, flags.format);
      const progress = new ImportProgress(process.stderr);
      let archive: ImportArchive | undefined;
      let opened: OpenedStore | undefined;
      try {
        archive = await openImportArchive(file);
        opened = await openStore(flags, () => {});
        const { format, threads } = await importThreadStream(opened.store, flags.did, source.batches, {
          onBatch: (batch) => progress.update(batch.bytesRead, source.size, batch.items),
          archive: archive?.file,
        });
        progress.end();
        console.log(
          `imported ${threads} thread${threads === 1 ? '' : 's'} (${format}) for ${flags.did} into ${opened.description}`,
        );
      } catch (error) {
        progress.end();
        if (error instanceof UnrecognisedImportError)
          throw new Error(`${source.name} is ${error.message}: say which with --format; nothing was imported`);
        if (error instanceof ImportDocumentError || error instanceof JsonDocumentError)
          throw new Error(`${source.name}: ${error.message}; nothing was imported`);
        throw error;
      } finally {
        await source.close();
        archive?.close();
        await opened?.store.close();
      }
    });
}
