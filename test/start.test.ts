import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BUNDLED_PACKAGES,
  TYPESCRIPT_PROJECTS,
  WEB_UI_INPUTS,
  bundlesAreStale,
  typeScriptIsStale,
  webUiIsStale,
} from '../scripts/stale-builds.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const isStale = { typeScript: typeScriptIsStale, bundles: bundlesAreStale, webUi: webUiIsStale };

describe('npm start', () => {
  let fixture: string | undefined;
  afterEach(async () => {
    if (fixture) await rm(fixture, { recursive: true, force: true });
  });

  /** A file of the fixture repository, written with the given modification time (seconds). */
  async function file(path: string, time: number): Promise<void> {
    const full = join(fixture!, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, '');
    await utimes(full, time, time);
  }

  it('builds what is older than its sources, and nothing else', async () => {
    fixture = await mkdtemp(join(tmpdir(), 'cpp-start-'));
    expect(isStale.typeScript(fixture)).toBe(true);
    expect(isStale.webUi(fixture)).toBe(true);

    await file('tsconfig.base.json', 1000);
    for (const project of TYPESCRIPT_PROJECTS as string[]) {
      await file(`${project}/src/index.ts`, 1000);
      await file(`${project}/tsconfig.json`, 1000);
      await file(`${project}/tsconfig.tsbuildinfo`, 2000);
    }
    for (const input of WEB_UI_INPUTS as string[])
      await file(input.endsWith('src') || input.endsWith('dist') ? `${input}/index.js` : input, 2000);
    await file('apps/web/dist/index.html', 3000);
    expect(isStale.typeScript(fixture)).toBe(false);
    expect(isStale.webUi(fixture)).toBe(false);

    await file('packages/server/src/cpp-server.ts', 2500);
    expect(isStale.typeScript(fixture)).toBe(true);
    expect(isStale.webUi(fixture)).toBe(false);
    await file('packages/server/tsconfig.tsbuildinfo', 2600);
    await file('packages/client/dist/index.js', 3500);
    expect(isStale.typeScript(fixture)).toBe(false);
    expect(isStale.webUi(fixture)).toBe(true);
  });

  it('bundles a package again when it was built since its bundle was', async () => {
    fixture = await mkdtemp(join(tmpdir(), 'cpp-start-'));
    expect(isStale.bundles(fixture)).toBe(true);

    for (const project of BUNDLED_PACKAGES as string[]) {
      await file(`${project}/tsconfig.tsbuildinfo`, 2000);
      await file(`${project}/bundle/index.js`, 3000);
    }
    expect(isStale.bundles(fixture)).toBe(false);

    await file('packages/protocol/tsconfig.tsbuildinfo', 3500);
    expect(isStale.bundles(fixture)).toBe(true);
  });

  it('starts the server at once when everything is built, without building', async () => {
    fixture = await mkdtemp(join(tmpdir(), 'cpp-start-'));
    const child = spawn(
      process.execPath,
      [
        'scripts/start.mjs',
        '--port',
        '0',
        '--host',
        '127.0.0.1',
        '--no-ui',
        '--auth',
        'claimed',
        '--db',
        join(fixture, 'cpp.sqlite'),
      ],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stderr.on('data', (data: Buffer) => (output += data.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (data: Buffer) => {
          output += data.toString();
          if (output.includes('cpp-server listening')) resolve();
        });
        child.on('exit', (code) => reject(new Error(`npm start exited (${code}):\n${output}`)));
      });
      expect(output).not.toContain('building');
    } finally {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT');
        await exited;
      }
    }
  });
});
