import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Run before the script: a resolve hook prints every module URL Node resolves for `import`, and at exit the
 * CommonJS modules `require` loaded are printed from its cache (Node 20's hooks do not see `require`).
 */
const RECORDER = `
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
const hooks = 'data:text/javascript,' + encodeURIComponent(\`
  export async function resolve(specifier, context, next) {
    const result = await next(specifier, context);
    process.stdout.write('resolved ' + result.url + '\\\\n');
    return result;
  }\`);
register(hooks);
// Any base will do: there is one require cache.
const { cache } = createRequire(process.cwd() + '/');
process.on('exit', () => {
  for (const file of Object.keys(cache)) process.stdout.write('resolved ' + pathToFileURL(file).href + '\\n');
});
`;

/**
 * The module files (their URLs) that a script — ES module code, or a file and its arguments — loads when run in a
 * new Node process in `cwd`, imported or required, as Node resolves them: a package is read as an application that
 * installed it reads it.
 */
export async function modulesLoadedBy(script: string | string[], cwd: string | URL): Promise<Set<string>> {
  const run = typeof script === 'string' ? ['--input-type=module', '-e', script] : script;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', `data:text/javascript,${encodeURIComponent(RECORDER)}`, ...run],
    { cwd },
  );
  return new Set([...stdout.matchAll(/^resolved (file:\S+)$/gm)].map((match) => match[1]!));
}

/** The package a module URL belongs to, by name (`@scope/name` or `name`), when it is in a node_modules folder. */
export function packageOf(url: string): string | undefined {
  return /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
}
