import type { Json, JsonObject } from './json.js';

/** How the runner makes a fresh value for a scenario variable before the scenario starts. */
export type Generator = 'messageId' | 'threadId' | 'did' | 'key';

/** How the server under test takes identities: as claimed (the kit's default), or proven by their keys. */
export type ServerAuth = 'claimed' | 'did-key';

/** One scenario file of conformance/scenarios; scenario.schema.json is the normative description. */
export interface Scenario {
  /** The file name without `.json`. */
  name: string;
  title: string;
  /** Sections of docs/PROTOCOL.md it checks, e.g. `§11.2`. */
  spec: string[];
  /** Run by the second, independent client too (conformance/python). */
  core?: boolean;
  /** The server it needs: `did-key` scenarios run against a server that proves identities, the others against one that takes claims. */
  auth?: ServerAuth;
  generate?: Record<string, Generator>;
  steps: Step[];
}

export interface HandshakeOptions {
  /** Subprotocols offered; `["cpp-v1.0.0"]` when absent. */
  protocols?: string[];
  headers?: Record<string, Json>;
  query?: Record<string, Json>;
  /** A path on the server's origin; the session endpoint when absent. */
  path?: string;
  /**
   * A `key` variable: the connection claims its DID and proves it, answering the server's challenge with the key,
   * before the next step.
   */
  prove?: string;
}

/**
 * One HTTP request beside the session, on its origin (the attachment endpoints, docs/PROTOCOL.md §27): `path` is a
 * path, or parts (strings and templates) joined into one; the answer must have `status`, and its JSON body match
 * `json` (whose `$capture`s bind variables).
 */
export interface HttpOptions {
  method?: string;
  path: string | Json[];
  query?: Record<string, Json>;
  headers?: Record<string, Json>;
  /** Sent as the body, the UTF-8 bytes of this text. */
  body?: string;
  status: number;
  json?: Json;
}

export interface RefuseOptions extends HandshakeOptions {
  status: number;
  body?: Json;
}

/** Every step names the connection it acts on with `on` ("client" when absent). */
interface StepBase {
  on?: string;
  note?: string;
}

export type Step = StepBase &
  (
    | { connect: HandshakeOptions }
    | { refuse: RefuseOptions }
    | { http: HttpOptions }
    | { send: JsonObject }
    | { sendText: Json }
    | { sendBinary: string }
    | { expect: Json }
    | { expectNext: Json }
    | { expectAll: Json[] }
    | { waitStreamed: { node: string; atLeast: number; part?: 'content' | 'reasoning' } }
    | { close: JsonObject }
    | { expectClose: { code: number } }
  );

export const STEP_KINDS = [
  'connect',
  'refuse',
  'http',
  'send',
  'sendText',
  'sendBinary',
  'expect',
  'expectNext',
  'expectAll',
  'waitStreamed',
  'close',
  'expectClose',
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export function stepKind(step: Step): StepKind {
  const kind = STEP_KINDS.find((candidate) => Object.hasOwn(step, candidate));
  if (!kind) throw new Error(`step has no action: ${JSON.stringify(step)}`);
  return kind;
}
