import { randomBytes } from 'node:crypto';
import { CPP_SUBPROTOCOL, newMessageId, newThreadId, type ServerFrame, type TextPart } from '@promethea/cpp-protocol';
import { ScenarioError } from './bindings.js';
import { Connection, type Handshake } from './connection.js';
import { requestUrl, type Endpoint } from './endpoint.js';
import type { FrameValidator } from './frame-validator.js';
import { isJsonObject, preview, type Json, type JsonObject } from './json.js';
import { matchPattern, type MatchContext } from './pattern.js';
import {
  stepKind,
  type Generator,
  type HandshakeOptions,
  type HttpOptions,
  type RefuseOptions,
  type Scenario,
  type Step,
} from './scenario.js';
import { fillTemplate } from './template.js';
import { attemptUpgrade } from './upgrade-refusal.js';
import { ProvingKey } from './proving-key.js';

/** The header naming the DID a connection claims (docs/PROTOCOL.md §2.3). */
const DID_HEADER = 'X-Client-Sovereign-DID';

export interface RunOptions {
  endpoint: Endpoint;
  validator: FrameValidator;
  /** How long a step waits for the server. */
  timeoutMs: number;
}

export interface ScenarioResult {
  scenario: Scenario;
  passed: boolean;
  /** Why it failed: the step (1-based) and what went wrong. */
  failure?: { step: number; description: string; message: string };
  durationMs: number;
}

/** The server did not do what the step expects. */
class StepFailure extends Error {
  override readonly name = 'StepFailure';
}

const DEFAULT_CONNECTION = 'client';

const GENERATORS: Record<Exclude<Generator, 'key'>, () => string> = {
  messageId: newMessageId,
  threadId: newThreadId,
  did: () => `did:key:zConformance${randomBytes(12).toString('hex')}`,
};

/** Runs one scenario against the server and reports whether the server did everything its steps expect. */
export async function runScenario(scenario: Scenario, options: RunOptions): Promise<ScenarioResult> {
  const started = Date.now();
  const run = new ScenarioRun(scenario, options);
  const failure = await run.execute();
  return { scenario, passed: failure === undefined, ...(failure ? { failure } : {}), durationMs: Date.now() - started };
}

class ScenarioRun {
  private readonly bindings = new Map<string, Json>();
  private readonly connections = new Map<string, Connection>();
  /** The `key` variables' keys, by variable name; each variable holds its key's DID. */
  private readonly keys = new Map<string, ProvingKey>();

  constructor(
    private readonly scenario: Scenario,
    private readonly options: RunOptions,
  ) {
    for (const [name, generator] of Object.entries(scenario.generate ?? {})) {
      if (generator !== 'key') {
        this.bindings.set(name, GENERATORS[generator]());
        continue;
      }
      const key = ProvingKey.generate();
      this.keys.set(name, key);
      this.bindings.set(name, key.did);
    }
  }

  async execute(): Promise<ScenarioResult['failure']> {
    let index = 0;
    try {
      for (const step of this.scenario.steps) {
        index += 1;
        await this.perform(step);
        this.checkViolations();
      }
      index += 1;
      this.finish();
      return undefined;
    } catch (error) {
      const step = this.scenario.steps[index - 1];
      const description = step ? describeStep(step) : 'end of scenario';
      const message =
        error instanceof Error
          ? `${error.name === 'ScenarioError' ? 'scenario error: ' : ''}${error.message}`
          : String(error);
      return { step: index, description, message };
    } finally {
      await Promise.all([...this.connections.values()].map((connection) => connection.close()));
    }
  }

  private async perform(step: Step): Promise<void> {
    const on = step.on ?? DEFAULT_CONNECTION;
    if ('connect' in step) return this.connect(on, step.connect);
    if ('refuse' in step) return this.refuse(step.refuse);
    if ('http' in step) return this.http(step.http);
    if ('send' in step) return this.send(on, step.send);
    if ('sendText' in step) return this.connection(on).send(this.text(step.sendText));
    if ('sendBinary' in step) return this.connection(on).send(Buffer.from(step.sendBinary, 'utf8'));
    if ('expect' in step) return this.expect(on, step.expect, true);
    if ('expectNext' in step) return this.expect(on, step.expectNext, false);
    if ('expectAll' in step) return this.expectAll(on, step.expectAll);
    if ('waitStreamed' in step) return this.waitStreamed(on, step.waitStreamed);
    if ('expectClose' in step) return this.expectClose(on, step.expectClose.code);
    await this.connection(on).close();
    this.connections.delete(on);
  }

  private text(template: Json): string {
    const text = fillTemplate(template, this.bindings);
    if (typeof text !== 'string') throw new ScenarioError('sendText needs a string');
    return text;
  }

  private async connect(name: string, options: HandshakeOptions): Promise<void> {
    if (this.connections.has(name)) throw new ScenarioError(`connection "${name}" is already open`);
    const key = options.prove === undefined ? undefined : this.keys.get(options.prove);
    if (options.prove !== undefined && !key) throw new ScenarioError(`"${options.prove}" is not a key variable`);
    const handshake = this.handshake(options);
    if (key) handshake.headers[DID_HEADER] = key.did;
    const connection = await Connection.open(handshake, this.options.validator, this.options.timeoutMs);
    this.connections.set(name, connection);
    if (key) await this.prove(connection, key);
  }

  /** Answers the connection's challenge with the key (docs/PROTOCOL.md §23.2) and waits until it is accepted. */
  private async prove(connection: Connection, key: ProvingKey): Promise<void> {
    const challenge = await this.nextFrame(connection, false);
    connection.observe(challenge);
    if (challenge.type !== 'CPP_AUTH_CHALLENGE')
      throw new StepFailure(`expected CPP_AUTH_CHALLENGE to a DID to prove, got ${describeFrame(challenge)}`);
    const proof = { did: key.did, nonce: challenge.payload.nonce, signature: key.sign(challenge.payload) };
    connection.send(JSON.stringify({ type: 'CPP_AUTH_PROOF', id: 'kit-proof', timestamp: Date.now(), payload: proof }));
    const accepted = await this.nextFrame(connection, false);
    connection.observe(accepted);
    if (accepted.type !== 'CPP_AUTH_ACCEPTED')
      throw new StepFailure(`expected CPP_AUTH_ACCEPTED to a valid proof, got ${describeFrame(accepted)}`);
  }

  private async refuse(options: RefuseOptions): Promise<void> {
    const answer = await attemptUpgrade(this.handshake(options), this.options.timeoutMs);
    if (!answer.refused)
      throw new StepFailure(`the server accepted an upgrade it must refuse with HTTP ${options.status}`);
    if (answer.status !== options.status)
      throw new StepFailure(`expected HTTP ${options.status}, got ${answer.status} (${preview(answer.body)})`);
    if (options.body !== undefined) this.assertMatch(options.body, answer.body, 'the refusal body');
  }

  private async http(options: HttpOptions): Promise<void> {
    const parts = typeof options.path === 'string' ? [options.path] : options.path;
    const path = parts.map((part) => String(fillTemplate(part, this.bindings))).join('');
    const { url, headers } = this.handshake({ path, query: options.query, headers: options.headers });
    const target = new URL(url);
    target.protocol = target.protocol === 'wss:' ? 'https:' : 'http:';
    const method = options.method ?? 'GET';
    const response = await fetch(target, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: options.body }),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    const text = await response.text();
    if (response.status !== options.status)
      throw new StepFailure(
        `${method} ${path}: expected HTTP ${options.status}, got ${response.status} (${preview(text)})`,
      );
    if (options.json === undefined) return;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new StepFailure(`${method} ${path}: the answer is not JSON (${preview(text)})`);
    }
    this.assertMatch(options.json, body, `${method} ${path}`);
  }

  private handshake(options: HandshakeOptions): Handshake {
    const fill = (values: Record<string, Json> = {}) =>
      Object.fromEntries(
        Object.entries(values).map(([name, value]) => [name, String(fillTemplate(value, this.bindings))]),
      );
    return {
      url: requestUrl(this.options.endpoint, options.path, fill(options.query)),
      protocols: options.protocols ?? [CPP_SUBPROTOCOL],
      headers: fill(options.headers),
    };
  }

  private send(on: string, template: JsonObject): void {
    const frame = fillTemplate(template, this.bindings) as JsonObject;
    // Client frames carry the time they were sent; a scenario only writes a timestamp to send a wrong one.
    const stamped = Object.hasOwn(frame, 'timestamp') ? frame : { ...frame, timestamp: Date.now() };
    this.connection(on).send(JSON.stringify(stamped));
  }

  /**
   * The next frame must match. With `skipChunks`, what streams before it (CPP_STREAM_CHUNKs, and a running tool's
   * progress reports) is taken on the way (into the copy of its node) unless the pattern itself expects a chunk.
   */
  private async expect(on: string, pattern: Json, skipChunks: boolean): Promise<void> {
    const connection = this.connection(on);
    const wantsChunk = isJsonObject(pattern) && pattern.type === 'CPP_STREAM_CHUNK';
    const frame = await this.nextFrame(connection, skipChunks && !wantsChunk);
    this.matchFrame(connection, pattern, frame);
  }

  /** The next frames (chunks aside) match the patterns in any order; each frame takes the first pattern it matches. */
  private async expectAll(on: string, patterns: Json[]): Promise<void> {
    const connection = this.connection(on);
    const remaining = [...patterns];
    while (remaining.length > 0) {
      const frame = await this.nextFrame(connection, true);
      const context = {
        bindings: this.bindings,
        streamed: (nodeId: string, part?: TextPart) => connection.copies.streamed(nodeId, part),
      };
      const index = remaining.findIndex((pattern) => matchPattern(pattern, frame, context).ok);
      if (index < 0)
        throw new StepFailure(
          `${describeFrame(frame)} matches none of the patterns still expected: ${preview(frame.payload, 300)}`,
        );
      this.matchFrame(connection, remaining.splice(index, 1)[0]!, frame);
    }
  }

  /** Takes chunks until the node's text (or reasoning) reaches `atLeast` code units; the node must still be streaming. */
  private async waitStreamed(
    on: string,
    { node, atLeast, part }: { node: string; atLeast: number; part?: TextPart },
  ): Promise<void> {
    const connection = this.connection(on);
    const nodeId = String(fillTemplate({ $ref: node }, this.bindings));
    for (;;) {
      const held = connection.copies.streamed(nodeId, part)?.text.length ?? 0;
      if (held >= atLeast) return;
      const frame = await connection.take(this.options.timeoutMs).catch((error: Error) => {
        throw new StepFailure(`${error.message} while node ${node} had streamed ${held} of ${atLeast} code units`);
      });
      connection.observe(frame);
      if (frame.type !== 'CPP_STREAM_CHUNK') {
        throw new StepFailure(
          `expected node ${node} to stream at least ${atLeast} code units, but ${describeFrame(frame)} came after ${held} (is the model as slow as the kit expects, e.g. --demo-delay-ms 20?)`,
        );
      }
    }
  }

  private async expectClose(on: string, code: number): Promise<void> {
    const event = await this.connection(on)
      .closed(this.options.timeoutMs)
      .catch((error: Error) => {
        throw new StepFailure(error.message);
      });
    this.connections.delete(on);
    if (event.code !== code)
      throw new StepFailure(`expected the server to close with ${code}, it closed with ${event.code} ${event.reason}`);
  }

  private async nextFrame(connection: Connection, skipChunks: boolean): Promise<ServerFrame> {
    for (;;) {
      const frame = await connection.take(this.options.timeoutMs).catch((error: Error) => {
        throw new StepFailure(error.message);
      });
      const streams =
        frame.type === 'CPP_STREAM_CHUNK' || (frame.type === 'CPP_TOOL_CALL' && frame.payload.toolCall.progress);
      if (!skipChunks || !streams) return frame;
      connection.observe(frame);
    }
  }

  /** Matches against the copy as it was before the frame, then applies the frame. */
  private matchFrame(connection: Connection, pattern: Json, frame: ServerFrame): void {
    try {
      this.assertMatch(pattern, frame, describeFrame(frame), (nodeId, part) =>
        connection.copies.streamed(nodeId, part),
      );
    } finally {
      connection.observe(frame);
    }
  }

  private assertMatch(
    pattern: Json,
    actual: unknown,
    what: string,
    streamed: MatchContext['streamed'] = () => undefined,
  ): void {
    const result = matchPattern(pattern, actual, { bindings: this.bindings, streamed });
    if (!result.ok) throw new StepFailure(`${what}: ${result.message}`);
    for (const [name, value] of result.bindings) this.bindings.set(name, value);
  }

  private checkViolations(): void {
    for (const [name, connection] of this.connections) {
      const violation = connection.violations[0];
      if (violation) throw new StepFailure(`on connection "${name}": ${violation}`);
    }
  }

  /** Frames received but never expected are still checked; an error nobody expected fails the scenario. */
  private finish(): void {
    for (const [name, connection] of this.connections) {
      const error = connection.drain().find((frame) => frame.type === 'CPP_ERROR');
      if (error)
        throw new StepFailure(
          `on connection "${name}": an unexpected ${describeFrame(error)}: ${preview(error.payload)}`,
        );
    }
    this.checkViolations();
  }

  private connection(name: string): Connection {
    const connection = this.connections.get(name);
    if (!connection) throw new ScenarioError(`no open connection "${name}"`);
    return connection;
  }
}

export function describeFrame(frame: ServerFrame): string {
  return frame.type === 'CPP_ERROR' ? `CPP_ERROR ${frame.payload.code}` : frame.type;
}

function describeStep(step: Step): string {
  const kind = stepKind(step);
  const value: unknown = (step as unknown as Record<string, unknown>)[kind];
  const type = isJsonObject(value) && typeof value.type === 'string' ? ` ${value.type}` : '';
  return `${kind}${type}${step.on ? ` on ${step.on}` : ''}${step.note ? ` (${step.note})` : ''}`;
}
