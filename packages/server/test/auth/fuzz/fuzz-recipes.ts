import fc from 'fast-check';

/**
 * What the fuzzer sends, as fast-check generates it: recipes, not frames. A recipe names thread and node ids by
 * index into the pools of ids the fuzzer has seen so far, and is made into a frame only when it is sent, so that
 * valid frames aim at real threads and nodes (and, from other connections, at other DIDs' threads).
 */
export type Pick = { pool: number } | { made: string };

export type ValidRecipe =
  | { type: 'CPP_THREAD_OPEN'; thread: Pick | undefined; patches: boolean | undefined }
  | { type: 'CPP_THREAD_CLOSE'; thread: Pick }
  | { type: 'CPP_THREAD_LIST' }
  | { type: 'CPP_SYNC_REQUEST'; thread: Pick }
  | {
      type: 'CPP_PROMPT';
      thread: Pick;
      prompt: string;
      newNode: Pick;
      parent: Pick | undefined;
      expectedVersion: number | undefined;
    }
  | {
      type: 'CPP_PIVOT_INIT';
      thread: Pick;
      interrupted: Pick;
      prompt: string;
      newNode: Pick;
      received: number | undefined;
      expectedVersion: number | undefined;
    }
  | { type: 'CPP_STREAM_STOP'; thread: Pick; node: Pick; received: number | undefined }
  | { type: 'CPP_ANCHOR_HEAD'; thread: Pick; target: Pick; expectedVersion: number | undefined }
  | { type: 'CPP_AUTH_PROOF'; nonce: string; signature: string };

export type Mutation =
  | { kind: 'drop-field'; index: number }
  | { kind: 'set-field'; index: number; value: unknown }
  | { kind: 'add-field'; name: string; value: unknown }
  | { kind: 'envelope'; field: 'type' | 'timestamp' | 'id' | 'payload'; value: unknown }
  | { kind: 'retype'; type: string }
  | { kind: 'truncate'; at: number }
  | { kind: 'splice'; at: number; text: string }
  | { kind: 'wrap' };

export type Recipe =
  | { kind: 'valid'; frame: ValidRecipe; withId: boolean }
  | { kind: 'mutated'; frame: ValidRecipe; mutation: Mutation }
  | { kind: 'garbage'; text: string }
  | { kind: 'json'; value: unknown }
  | { kind: 'binary'; bytes: Uint8Array }
  | { kind: 'oversized'; extraBytes: number }
  /** These end the connection, so they are only ever the last frame of a batch. */
  | { kind: 'hard-oversized' }
  | { kind: 'invalid-utf8'; bytes: Uint8Array };

const KNOWN_TYPES = [
  'CPP_THREAD_OPEN',
  'CPP_THREAD_CLOSE',
  'CPP_THREAD_LIST',
  'CPP_SYNC_REQUEST',
  'CPP_PROMPT',
  'CPP_PIVOT_INIT',
  'CPP_STREAM_STOP',
  'CPP_ANCHOR_HEAD',
  'CPP_AUTH_PROOF',
];

const pick: fc.Arbitrary<Pick> = fc.oneof(
  { weight: 6, arbitrary: fc.nat().map((pool) => ({ pool })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('thread_', 'msg_')
      .chain((prefix) => fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/).map((body) => ({ made: prefix + body }))),
  },
);
/** Mostly absent: a stale expectedVersion or a wrong parent is refused, and most frames should get through. */
function rarely<Value>(arbitrary: fc.Arbitrary<Value>): fc.Arbitrary<Value | undefined> {
  return fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}
const small = rarely(fc.nat({ max: 12 }));
const prompt = fc.oneof(
  { weight: 8, arbitrary: fc.string({ minLength: 1, maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(' ', '\t\n', '\u00a0', 'a\u0000b', '\ud800', '🚀'.repeat(3), 'a long prompt '.repeat(8)),
  },
);

const validRecipe: fc.Arbitrary<ValidRecipe> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('CPP_THREAD_OPEN' as const),
      thread: fc.option(pick, { nil: undefined }),
      patches: fc.option(fc.boolean(), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('CPP_THREAD_CLOSE' as const), thread: pick }) },
  { weight: 1, arbitrary: fc.constant({ type: 'CPP_THREAD_LIST' as const }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('CPP_SYNC_REQUEST' as const), thread: pick }) },
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('CPP_PROMPT' as const),
      thread: pick,
      prompt,
      newNode: pick,
      parent: rarely(pick),
      expectedVersion: small,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('CPP_PIVOT_INIT' as const),
      thread: pick,
      interrupted: pick,
      prompt,
      newNode: pick,
      received: small,
      expectedVersion: small,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('CPP_STREAM_STOP' as const), thread: pick, node: pick, received: small }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('CPP_ANCHOR_HEAD' as const),
      thread: pick,
      target: pick,
      expectedVersion: small,
    }),
  },
);

const proofRecipe: fc.Arbitrary<ValidRecipe> = fc.record({
  type: fc.constant('CPP_AUTH_PROOF' as const),
  nonce: fc.stringMatching(/^[A-Za-z0-9_-]{22,43}$/),
  signature: fc.stringMatching(/^[A-Za-z0-9_-]{86}$/),
});

const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.string({ maxLength: 30 }),
  fc.integer(),
  fc.double(),
  fc.constant(undefined),
);

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('drop-field' as const), index: fc.nat() }),
  fc.record({ kind: fc.constant('set-field' as const), index: fc.nat(), value: anyValue }),
  fc.record({ kind: fc.constant('add-field' as const), name: fc.string({ maxLength: 10 }), value: anyValue }),
  fc.record({
    kind: fc.constant('envelope' as const),
    field: fc.constantFrom('type', 'timestamp', 'id', 'payload'),
    value: anyValue,
  }),
  fc.record({
    kind: fc.constant('retype' as const),
    type: fc.oneof(fc.constantFrom(...KNOWN_TYPES), fc.string({ maxLength: 70 })),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('splice' as const),
    at: fc.nat(),
    text: fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('"', '{', '}', ',', '\\', '\u0000')),
  }),
  fc.constant({ kind: 'wrap' as const }),
);

/** A frame that leaves the connection open. */
export const survivableRecipe: fc.Arbitrary<Recipe> = fc.oneof(
  {
    weight: 30,
    arbitrary: fc.record({ kind: fc.constant('valid' as const), frame: validRecipe, withId: fc.boolean() }),
  },
  {
    weight: 40,
    arbitrary: fc.record({
      kind: fc.constant('mutated' as const),
      frame: fc.oneof({ weight: 20, arbitrary: validRecipe }, { weight: 1, arbitrary: proofRecipe }),
      mutation,
    }),
  },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('garbage' as const), text: fc.string({ maxLength: 60 }) }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('json' as const), value: fc.jsonValue({ maxDepth: 3 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('binary' as const), bytes: fc.uint8Array({ maxLength: 40 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('oversized' as const), extraBytes: fc.nat({ max: 2048 }) }) },
);

/** A frame that ends the connection: a proof (never valid: random or replayed), or a frame the transport refuses. */
export const closingRecipe: fc.Arbitrary<Recipe> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('valid' as const), frame: proofRecipe, withId: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'hard-oversized' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('invalid-utf8' as const),
      bytes: fc.constantFrom(Uint8Array.of(0xff), Uint8Array.of(0xc3, 0x28), Uint8Array.of(0xed, 0xa0, 0x80)),
    }),
  },
);

/** A batch: frames that keep the connection, one batch in twenty ended by one that closes it. */
export function batchOf(size: number): fc.Arbitrary<Recipe[]> {
  const ending = fc.oneof({ weight: 1, arbitrary: closingRecipe }, { weight: 19, arbitrary: survivableRecipe });
  return fc
    .tuple(fc.array(survivableRecipe, { minLength: size - 1, maxLength: size - 1 }), ending)
    .map(([frames, last]) => [...frames, last]);
}
