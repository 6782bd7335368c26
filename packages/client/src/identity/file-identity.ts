import { randomUUID } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DidKeyIdentity, type StoredIdentity } from './did-key-identity.js';

const OWNER_ONLY = 0o600;

/**
 * The identity kept in the file at `path`, created there (readable by its owner only, mode 0600) when there is
 * none. A file that others may read is refused, as ssh refuses such a key: the private key would not be private.
 */
export async function fileIdentity(path: string): Promise<DidKeyIdentity> {
  try {
    return await readIdentity(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const identity = await DidKeyIdentity.generate({ extractable: true });
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // Written whole under a name of its own, then linked to `path`: a process racing this one never reads the file
  // half written, and a link, unlike a rename, fails when the name is taken, so the first identity kept wins and
  // the others read it back.
  const written = `${path}.${randomUUID()}.tmp`;
  try {
    const file = await open(written, 'wx', OWNER_ONLY);
    try {
      await file.writeFile(`${JSON.stringify(await identity.toStored(), null, 2)}\n`);
      // On disk before it takes its name: a crash then leaves the identity whole or no file, never an empty one.
      await file.sync();
    } finally {
      await file.close();
    }
    // The mode given to open is narrowed by the umask, never widened; chmod makes it exact.
    await chmod(written, OWNER_ONLY);
    await link(written, path);
    return identity;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readIdentity(path);
  } finally {
    await rm(written, { force: true });
  }
}

async function readIdentity(path: string): Promise<DidKeyIdentity> {
  const { mode } = await stat(path);
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new Error(
      `${path} holds a private key and may be read by others (mode ${(mode & 0o777).toString(8)}): chmod 600 it`,
    );
  }
  const text = await readFile(path, 'utf8');
  try {
    return await DidKeyIdentity.fromStored(JSON.parse(text) as StoredIdentity);
  } catch (error) {
    const problem = text.trim() === '' ? 'it is empty' : error instanceof Error ? error.message : String(error);
    throw new Error(
      `${path} does not hold an identity (${problem}; a crash while it was written can leave it so): restore it ` +
        "from a backup, or move it away to make a new identity, which will not own the old one's threads",
    );
  }
}
