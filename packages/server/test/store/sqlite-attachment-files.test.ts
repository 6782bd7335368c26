import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ORPHAN_FILE_AGE_MS } from '../../src/store/sqlite-attachments.js';
import { SQLITE_MIGRATIONS } from '../../src/store/sqlite-migrations.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { putAttachment, type StoredThread } from '../../src/store/conversation-store.js';
import { uploaded } from './attachment-store-contract.js';
import { oneMessageThread } from './one-message-thread.js';
import { sqliteFileHandles } from './sqlite-file-handles.js';
import { TestClock, ThreadDriver } from './thread-driver.js';

const root = mkdtempSync(join(tmpdir(), 'cpp-sqlite-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let databases = 0;

describe('SqliteStore attachment files', () => {
  let path: string;
  let folder: string;
  const { open, inspect, kept } = sqliteFileHandles(() => path);
  const fileOf = (sha256: string) => join(folder, sha256.slice(0, 2), sha256);
  /** Every file in the folder but its temporary files', as paths below it. */
  const filesInFolder = () =>
    existsSync(folder)
      ? readdirSync(folder)
          .filter((name) => name !== 'tmp')
          .flatMap((prefix) => readdirSync(join(folder, prefix)).map((name) => `${prefix}/${name}`))
      : [];
  const age = (file: string, ms: number) => {
    const when = new Date(Date.now() - ms);
    utimesSync(file, when, when);
  };

  beforeEach(() => {
    databases += 1;
    path = join(root, `case-${databases}`, 'cpp.db');
    folder = `${path}.files`;
  });

  it('keeps the bytes as one file named by their SHA-256 beside the database, not in its rows', async () => {
    const store = open();
    const first = uploaded('the same bytes');
    const second = uploaded('the same bytes');
    await putAttachment(store, first.record, first.bytes);
    await putAttachment(store, second.record, second.bytes);

    expect(filesInFolder()).toEqual([`${first.record.sha256.slice(0, 2)}/${first.record.sha256}`]);
    expect(readFileSync(fileOf(first.record.sha256))).toStrictEqual(Buffer.from(first.bytes));
    expect(inspect().prepare('SELECT sha256, length(bytes) AS length, in_file FROM attachment_blobs').all()).toEqual([
      { sha256: first.record.sha256, length: 0, in_file: 1 },
    ]);
    expect(await store.attachmentBytes(first.record.sha256)).toStrictEqual(first.bytes);
    expect(readdirSync(join(folder, 'tmp'))).toEqual([]);
  });

  it('removes the file with the last attachment that has it: a deleted thread, a deleted branch, a stale upload', async () => {
    const store = open();
    const driver = await ThreadDriver.create(store, new TestClock());
    const inThread = uploaded('carried by the thread');
    const inBranch = uploaded('carried by a branch');
    const pending = uploaded('never carried', { createdAt: 10 });
    for (const file of [inThread, inBranch, pending]) await putAttachment(store, file.record, file.bytes);
    const root = await driver.prompt('Root', { attachments: [inThread.attachment] });
    await driver.finish({ nodeId: root.assistantNodeId, status: 'completed', content: 'Seen' });
    const branch = await driver.prompt('Branch', {
      parentNodeId: root.assistantNodeId,
      attachments: [inBranch.attachment],
    });
    await driver.finish({ nodeId: branch.assistantNodeId, status: 'completed', content: 'Seen' });

    await driver.deleteBranch(branch.userNodeId);
    expect(existsSync(fileOf(inBranch.record.sha256))).toBe(false);
    expect(await store.deleteUnusedAttachments(11)).toBe(1);
    expect(existsSync(fileOf(pending.record.sha256))).toBe(false);
    expect(existsSync(fileOf(inThread.record.sha256))).toBe(true);
    await store.deleteThread(driver.threadId);
    expect(filesInFolder()).toEqual([]);
  });

  it('keeps the file of a thread deleted inside an import that then fails, as the deletion is rolled back with it', async () => {
    const store = open();
    const driver = await ThreadDriver.create(store, new TestClock());
    const file = uploaded('carried');
    await putAttachment(store, file.record, file.bytes);
    await driver.prompt('Read this', { attachments: [file.attachment] });
    // The import holds its transaction open across its awaits; the deletion runs inside it.
    async function* batches(): AsyncGenerator<readonly StoredThread[]> {
      yield [oneMessageThread('did:example:alice', 'Imported', 1)];
      expect(await store.deleteThread(driver.threadId)).toBe(true);
      throw new Error('the file ended early');
    }

    await expect(store.importThreadBatches(batches())).rejects.toThrow('the file ended early');

    expect(await store.loadAttachments([file.record.id])).toHaveLength(1);
    expect(await store.attachmentBytes(file.record.sha256)).toStrictEqual(file.bytes);
  });

  it('writes an upload to a temporary file as its bytes arrive, and leaves nothing but its file whatever ends it', async () => {
    const store = open();
    const temporary = join(folder, 'tmp');
    // Larger than the syncs started on the way and the bytes queued before a write waits, in pieces as a socket gives.
    const large = uploaded('x'.repeat(9 * 1024 * 1024 + 7));
    const upload = await store.openAttachment();
    for (let start = 0; start < large.bytes.length; start += 65_536)
      await upload.write(large.bytes.subarray(start, start + 65_536));
    // A write waits once a MiB is queued: before the finish, all but what is queued and what is being written (a MiB
    // and a piece each, at most) is in the temporary file.
    const [temporaryFile] = readdirSync(temporary);
    expect(statSync(join(temporary, temporaryFile!)).size).toBeGreaterThan(large.bytes.length - 3 * 1024 * 1024);
    expect(filesInFolder()).toEqual([]);
    await upload.finish(large.record);
    await upload.close();
    expect(readdirSync(temporary)).toEqual([]);
    expect(readFileSync(fileOf(large.record.sha256)).equals(large.bytes)).toBe(true);

    // The same bytes again: kept once, this upload's file removed.
    const again = uploaded('x'.repeat(9 * 1024 * 1024 + 7));
    const second = await store.openAttachment();
    await second.write(again.bytes);
    await second.finish(again.record);
    await second.close();
    expect([readdirSync(temporary), filesInFolder()]).toEqual([
      [],
      [`${large.record.sha256.slice(0, 2)}/${large.record.sha256}`],
    ]);

    // Given up while its bytes are still being written, and given up after a finish that failed (a taken id).
    const cut = await store.openAttachment();
    void cut.write(new Uint8Array(2 * 1024 * 1024));
    await cut.close();
    const taken = uploaded('x', { name: 'taken.txt' });
    const conflicting = await store.openAttachment();
    await conflicting.write(taken.bytes);
    await expect(conflicting.finish({ ...taken.record, id: large.record.id })).rejects.toThrow();
    await conflicting.close();
    expect(readdirSync(temporary)).toEqual([]);
    expect(await store.loadAttachments([taken.record.id])).toEqual([]);
  });

  it('writes a file again that went missing while its row stayed', async () => {
    const store = open();
    const first = uploaded('written twice');
    await putAttachment(store, first.record, first.bytes);
    rmSync(fileOf(first.record.sha256));
    expect(await store.attachmentBytes(first.record.sha256)).toBeUndefined();

    const second = uploaded('written twice');
    await putAttachment(store, second.record, second.bytes);

    expect(await store.attachmentBytes(first.record.sha256)).toStrictEqual(first.bytes);
  });

  it('sweeps files no row names and temporary files once an hour old, and keeps younger ones', async () => {
    const store = open();
    const kept = uploaded('kept, old');
    await putAttachment(store, kept.record, kept.bytes);
    age(fileOf(kept.record.sha256), 2 * ORPHAN_FILE_AGE_MS);
    // What a crash leaves: a file written whose row never came, and a file cut off before its rename.
    const orphan = uploaded('orphan');
    const young = uploaded('orphan, young');
    for (const file of [orphan, young]) {
      mkdirSync(dirname(fileOf(file.record.sha256)), { recursive: true });
      writeFileSync(fileOf(file.record.sha256), file.bytes);
    }
    age(fileOf(orphan.record.sha256), ORPHAN_FILE_AGE_MS + 60_000);
    const oldTemp = join(folder, 'tmp', 'cut-off');
    const youngTemp = join(folder, 'tmp', 'in-flight');
    writeFileSync(oldTemp, 'part');
    writeFileSync(youngTemp, 'part');
    age(oldTemp, ORPHAN_FILE_AGE_MS + 60_000);

    await store.deleteUnusedAttachments(0);

    expect(existsSync(fileOf(orphan.record.sha256))).toBe(false);
    expect(existsSync(oldTemp)).toBe(false);
    expect(existsSync(fileOf(young.record.sha256))).toBe(true);
    expect(existsSync(youngTemp)).toBe(true);
    expect(await store.attachmentBytes(kept.record.sha256)).toStrictEqual(kept.bytes);
  });

  it('reads, and frees, the bytes a server before the files kept in their rows; new bytes go to files', async () => {
    mkdirSync(dirname(path), { recursive: true });
    const old = inspect();
    for (const sql of SQLITE_MIGRATIONS.slice(0, 10)) old.exec(sql);
    old.pragma('user_version = 10');
    const legacy = uploaded('kept in the row', { createdAt: 10 });
    old.prepare('INSERT INTO attachment_blobs (sha256, bytes) VALUES (?, ?)').run(legacy.record.sha256, legacy.bytes);
    old
      .prepare(`INSERT INTO attachments (attachment_id, owner_did, thread_id, sha256, name, media_type, size, created_at)
        VALUES (?, ?, NULL, ?, ?, ?, ?, ?)`)
      .run(
        legacy.record.id,
        legacy.record.ownerDid,
        legacy.record.sha256,
        legacy.record.name,
        legacy.record.mediaType,
        legacy.record.size,
        10,
      );
    const store = open();

    expect(await store.loadAttachments([legacy.record.id])).toStrictEqual([legacy.record]);
    expect(await store.attachmentBytes(legacy.record.sha256)).toStrictEqual(legacy.bytes);
    // The same bytes uploaded again stay in the row that has them.
    const again = uploaded('kept in the row', { createdAt: 20 });
    await putAttachment(store, again.record, again.bytes);
    const fresh = uploaded('new bytes', { createdAt: 20 });
    await putAttachment(store, fresh.record, fresh.bytes);
    expect(filesInFolder()).toEqual([`${fresh.record.sha256.slice(0, 2)}/${fresh.record.sha256}`]);

    expect(await store.deleteUnusedAttachments(30)).toBe(3);
    expect(await store.attachmentBytes(legacy.record.sha256)).toBeUndefined();
    expect(inspect().prepare('SELECT count(*) FROM attachment_blobs').pluck().get()).toBe(0);
    expect(filesInFolder()).toEqual([]);
  });

  it('keeps the bytes in its rows when the database is in memory, and makes no folder', async () => {
    const store = kept(SqliteStore.open(':memory:'));
    const file = uploaded('in memory', { createdAt: 10 });
    await putAttachment(store, file.record, file.bytes);

    expect(await store.attachmentBytes(file.record.sha256)).toStrictEqual(file.bytes);
    expect(await store.deleteUnusedAttachments(11)).toBe(1);
    expect(await store.attachmentBytes(file.record.sha256)).toBeUndefined();
    expect(existsSync(':memory:.files')).toBe(false);
  });
});
