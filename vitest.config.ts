import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

const ALL = [
  'packages/*/test/**/*.test.ts',
  'apps/*/test/**/*.test.ts',
  'conformance/test/**/*.test.ts',
  'bench/test/**/*.test.ts',
  'test/**/*.test.ts',
];

/** Pure logic: no socket, no file, no process, no database. `npm run test:unit` runs them in seconds. */
const UNIT = [
  'packages/protocol/test/**/*.test.ts',
  'packages/server/test/engine/**/*.test.ts',
  'packages/server/test/context/**/*.test.ts',
  'packages/server/test/auth/{client-address-and-audience,frame-rate-limiter,proof-check,replay-cache}.test.ts',
  'packages/server/test/cluster/local-cluster.test.ts',
  'packages/server/test/model/{demo-provider,generation-runner,model-flags,provider-factory}.test.ts',
  'packages/server/test/session/backpressure-queue.test.ts',
  'packages/server/test/store/memory-store.test.ts',
  'packages/server/test/tools/{answer-steps,tool-registry}.test.ts',
  'packages/client/test/{reconnect-policy,session-url}.test.ts',
  'packages/client/test/cli/format-tree.test.ts',
  'packages/client/test/identity/{did-key-identity,kept-identity}.test.ts',
  'packages/react/test/{branch,graph-snapshot}.test.ts',
  'conformance/test/{pattern,thread-copies}.test.ts',
  'bench/test/paced-tokens.test.ts',
  'test/bench-harness.test.ts',
  'apps/web/test/tree-layout.test.ts',
];

/** Chromium driven through playwright-core: the web UI, and the client SDK and the AI SDK transport in a browser. */
const BROWSER = [
  'apps/web/test/**/*.test.ts',
  'packages/client/test/browser*.test.ts',
  'packages/ai-sdk/test/use-chat.test.ts',
];

/**
 * Soak-sized suites: a sample of their size in `npm test`, all of it under `npm run test:soak` (see
 * test/support/soak-size.ts).
 */
const SOAK = [
  'packages/server/test/reliability/crash-loop.test.ts',
  'packages/client/test/reliability/flaky-clients.test.ts',
  'packages/server/test/auth/fuzz.test.ts',
];

/**
 * The longest files, longest first (as timed on this machine): Vitest runs the files it has timed before longest
 * first, but a fresh clone (as in CI) has no timings, and ordered by size one of these could start last and hold the
 * run up alone. The projects that run together (the same groupOrder) are ordered as one: a soak or unit file that
 * takes seconds must not wait for the hundreds of small files to end.
 */
const LONGEST = [
  'packages/ai-sdk/test/use-chat.test.ts',
  'apps/web/test/chat.test.ts',
  'apps/web/test/accessibility.test.ts',
  'apps/web/test/models.test.ts',
  'apps/web/test/thread-operations.test.ts',
  'apps/web/test/keyboard.test.ts',
  'apps/web/test/message-actions.test.ts',
  'test/package/pack-install.test.ts',
  'test/quick-start.test.ts',
  'packages/server/test/cluster/cluster-processes.test.ts',
  'packages/server/test/store/postgres-store.test.ts',
  'packages/server/test/auth/access.test.ts',
  'packages/server/test/auth/fuzz.test.ts',
  'conformance/test/cpp-server-passes.test.ts',
  'packages/server/test/package/root-import.test.ts',
  'conformance/test/python-client.test.ts',
  'packages/server/test/session/backpressure.test.ts',
  'packages/server/test/reliability/crash-loop.test.ts',
  'packages/client/test/integration/cpp-chat-operations.test.ts',
  'packages/server/test/engine/large-thread-sync.test.ts',
];

/** Vitest's order (timings or sizes), with the files of LONGEST first within the projects that run together. */
class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = LONGEST.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
      return index === -1 ? LONGEST.length : index;
    };
    const position = new Map(sorted.map((spec, index) => [spec, index]));
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    return sorted.toSorted((a, b) => group(a) - group(b) || rank(a) - rank(b) || position.get(a)! - position.get(b)!);
  }
}

// Tests run against the TypeScript sources of the workspace packages; tests that spawn the CLI use the build,
// which `npm test` makes first.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@promethea\/cpp-protocol$/, replacement: source('./packages/protocol/src/index.ts') },
      { find: /^@promethea\/cpp-client(\/node)?$/, replacement: source('./packages/client/src/node.ts') },
      { find: /^@promethea\/cpp-server$/, replacement: source('./packages/server/src/index.ts') },
      { find: /^@promethea\/cpp-ai-sdk$/, replacement: source('./packages/ai-sdk/src/index.ts') },
      // Each subpath export of the server is the source file of the same name: ./sqlite is src/sqlite.ts.
      { find: /^@promethea\/cpp-server\/([a-z-]+)$/, replacement: `${source('./packages/server/src/')}$1.ts` },
    ],
  },
  test: {
    // Timeouts only catch a test that hangs: on a shared two-core machine starting a process or a browser alone
    // can take seconds, and a test that waits for its events is not made flaky by a long limit.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // Most tests wait on sockets, timers and other processes rather than the CPU (the whole suite keeps about one of
    // this machine's two cores busy): three files at a time took the suite from 353 s to 298 s on the idle machine
    // (Vitest's default, one fewer than the cores, would be one here). The browser project, whose Chromium does keep
    // a core busy, runs first and two at a time (300 s in all, with three Chromiums never at once).
    maxWorkers: 3,
    // One module graph per worker for all its files: loading the packages once per file was most of the suite's CPU
    // time (6× the unit project's). So a test file must leave no state behind: fixtures close what they open after
    // each test, fake timers are put back, and a support module registers no top-level hook (use onTestFinished).
    isolate: false,
    sequence: { sequencer: LongestFirst },
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, testTimeout: 20_000, sequence: { groupOrder: 1 } } },
      // Real sockets, SQLite files, PostgreSQL, Redis, child processes: every test file that no other project lists.
      {
        extends: true,
        test: {
          name: 'integration',
          include: ALL,
          exclude: [...configDefaults.exclude, ...UNIT, ...BROWSER, ...SOAK],
          sequence: { groupOrder: 1 },
        },
      },
      // One Chromium per worker for all its files (test/support/chromium.ts); each test opens profiles of its own.
      // Two at a time, first: Chromium keeps its core busy, where the other projects' files mostly wait.
      {
        extends: true,
        test: {
          name: 'browser',
          include: BROWSER,
          exclude: [...configDefaults.exclude, ...UNIT],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'soak', include: SOAK, sequence: { groupOrder: 1 } } },
    ],
  },
});
