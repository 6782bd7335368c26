import { ErrorCode } from '@promethea/cpp-protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ThreadGeneration, type GenerationState } from '../../src/engine/answer.js';
import { AnswerStream } from '../../src/engine/answer-stream.js';
import { SolitaryLinks } from '../../src/engine/solitary-link.js';
import { StreamPersister } from '../../src/engine/stream-persister.js';
import type { ThreadLink } from '../../src/engine/thread-link.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { ScriptedModel } from '../support/scripted-model.js';

// The generation's state machine (answer.ts), every state × every event: what each transition leads to, and what
// an event the state does not take does instead. The lock is a real SolitaryLink; the streams are real AnswerStreams
// over a scripted model, so that `halt` cuts what was sent and `end` follows a stream that ended by itself.

type StateName = GenerationState['name'];
const STATES: readonly StateName[] = ['idle', 'held', 'streaming', 'halting', 'ended'];

interface Machine {
  generation: ThreadGeneration;
  /** The lock as another engine of the thread sees it. */
  rival: ThreadLink;
  /** The stream the machine holds, if any, and a second one ready to start. */
  stream: AnswerStream | undefined;
  spare: AnswerStream;
  /** The model of `stream`. */
  model: ScriptedModel | undefined;
  /** How many times the machine said it went idle (the thread may be unloaded). */
  idled: number;
  /** The persister forgot this stream's node: it no longer saves its text. */
  forgotten: string[];
}

/** A paused stream writing `nodeId`, whose model sends one chunk and ends once released. */
function answerStream(
  nodeId: string,
  onEnd: () => void = () => undefined,
): { stream: AnswerStream; model: ScriptedModel } {
  const model = new ScriptedModel({ chunks: ['Hello'] });
  const hooks = {
    onChunk: () => undefined,
    onToolCall: () => undefined,
    onToolInput: () => undefined,
    onEnd,
    onStopped: () => undefined,
  };
  const observation = { firstChunk: () => undefined, ended: () => undefined };
  const tools = { registry: new ToolRegistry(), threadId: 'thread_a', identity: 'anonymous' };
  return { stream: new AnswerStream(nodeId, model, [], hooks, 0, observation, tools), model };
}

/** A machine brought to `state` by the transitions the engine uses. */
async function machineIn(state: StateName): Promise<Machine> {
  const store = new MemoryStore();
  const links = new SolitaryLinks(store);
  const { link } = await links.open('thread_a');
  const { link: rival } = await links.open('thread_a');
  const persister = new StreamPersister(store, 60_000, () => undefined);
  onTestFinished(() => persister.stop());
  const forgotten: string[] = [];
  const forget = persister.forget.bind(persister);
  persister.forget = (nodeId) => {
    forgotten.push(nodeId);
    forget(nodeId);
  };
  const machine: Machine = {
    generation: new ThreadGeneration('thread_a', link, persister, () => (machine.idled += 1)),
    rival,
    stream: undefined,
    spare: answerStream('node_spare').stream,
    model: undefined,
    idled: 0,
    forgotten,
  };
  onTestFinished(() => {
    machine.stream?.halt();
    machine.spare.halt();
  });
  if (state === 'idle') return machine;
  await machine.generation.claim();
  if (state === 'held') return machine;
  let ended: () => void = () => undefined;
  const endedByItself = new Promise<void>((resolve) => (ended = resolve));
  const { stream, model } = answerStream('node_a', () => ended());
  machine.stream = stream;
  machine.model = model;
  machine.generation.start(stream);
  if (state === 'streaming') return machine;
  if (state === 'halting') {
    expect(machine.generation.halt({})).toBeDefined();
    return machine;
  }
  (await model.call(0)).releaseAll();
  await endedByItself;
  machine.generation.end(stream);
  return machine;
}

/** What a machine in each state does with an event: the state it is in after it, and what else is true then. */
interface Cell {
  next: StateName;
  /** How often the machine says it went idle; default: once when it leaves for idle. */
  idles?: number;
  check?(machine: Machine, result: unknown): Promise<void> | void;
}

type Event = (machine: Machine) => unknown;

const lockIsFree = async (machine: Machine) => expect(await machine.rival.claimGeneration()).toBe(true);
const lockIsHeld = async (machine: Machine) => expect(await machine.rival.claimGeneration()).toBe(false);
/** The stream's model call was aborted (a microtask after the halt, see `AnswerStream.halt`). */
const streamHalted = async (machine: Machine) => {
  await new Promise<void>((resolve) => queueMicrotask(resolve));
  expect(machine.model!.calls[0]!.signal.aborted).toBe(true);
};
/** `start` was refused, and the stream the machine had is the one it has. */
const startRefused = (machine: Machine, refused: unknown) => {
  expect(refused).toBeInstanceOf(Error);
  expect(machine.generation.stream).toBe(machine.stream);
};

const EVENTS: Record<string, { event: Event; cells: Record<StateName, Cell> }> = {
  // claim: the lock is taken for an answer about to be committed.
  claim: {
    event: (machine) => machine.generation.claim(),
    cells: {
      idle: { next: 'held', check: lockIsHeld },
      // Held already (a halted stream's thread about to start the next answer): nothing to take, nothing changes.
      held: { next: 'held', check: lockIsHeld },
      streaming: { next: 'streaming', check: lockIsHeld },
      halting: { next: 'halting', check: lockIsHeld },
      ended: { next: 'ended', check: lockIsHeld },
    },
  },
  // start: the committed answer's text flows. Only a held generation starts one; any other state refuses it.
  start: {
    event: (machine) => {
      try {
        machine.generation.start(machine.spare);
        return undefined;
      } catch (error) {
        return error;
      }
    },
    cells: {
      idle: { next: 'idle', check: startRefused },
      held: {
        next: 'streaming',
        check: (machine, refused) => {
          expect(refused).toBeUndefined();
          expect(machine.generation.stream).toBe(machine.spare);
        },
      },
      streaming: { next: 'streaming', check: startRefused },
      halting: { next: 'halting', check: startRefused },
      ended: { next: 'ended', check: startRefused },
    },
  },
  // halt: a pivot, stop, regenerate or shutdown stops the stream at its cut.
  halt: {
    event: (machine) => machine.generation.halt({ content: 3 }),
    cells: {
      idle: { next: 'idle', check: (_machine, cut) => expect(cut).toBeUndefined() },
      held: { next: 'held', check: (_machine, cut) => expect(cut).toBeUndefined() },
      streaming: {
        next: 'halting',
        check: (machine, cut) => {
          expect(cut).toMatchObject({ finalContentLength: 0 });
          streamHalted(machine);
        },
      },
      // Halted already: the same cut again.
      halting: {
        next: 'halting',
        check: (machine, cut) => {
          expect(cut).toBe(machine.generation.state.name === 'halting' && machine.generation.state.cut);
        },
      },
      // Ended by itself first: nothing to cut, its end is committed instead.
      ended: { next: 'ended', check: (_machine, cut) => expect(cut).toBeUndefined() },
    },
  },
  // end: the stream ended by itself.
  end: {
    event: (machine) => machine.generation.end(machine.stream ?? machine.spare),
    cells: {
      idle: { next: 'idle' },
      held: { next: 'held' },
      streaming: { next: 'ended' },
      // A halt got there first: the end of a halted stream is not an end.
      halting: { next: 'halting' },
      ended: { next: 'ended' },
    },
  },
  // committed, by a change that ends this server's stream and starts none: the lock is let go.
  'committed (starts nothing)': {
    event: (machine) => machine.generation.committed(() => false, false),
    cells: {
      // A tree edit's commit: idle is said again, so that a thread nobody subscribes to is unloaded.
      idle: { next: 'idle', idles: 1, check: lockIsFree },
      held: { next: 'idle', check: lockIsFree },
      streaming: { next: 'idle', check: (machine) => expect(machine.forgotten).toEqual(['node_a']) },
      halting: { next: 'idle', check: (machine) => expect(machine.forgotten).toEqual(['node_a']) },
      ended: { next: 'idle', check: (machine) => expect(machine.forgotten).toEqual(['node_a']) },
    },
  },
  // committed, by the change that starts an answer (and ends the halted stream, if any): the lock stays held.
  'committed (starts an answer)': {
    event: (machine) => machine.generation.committed(() => false, true),
    cells: {
      idle: { next: 'idle', check: lockIsFree },
      held: { next: 'held', check: lockIsHeld },
      streaming: { next: 'held', check: lockIsHeld },
      halting: { next: 'held', check: lockIsHeld },
      ended: { next: 'held', check: lockIsHeld },
    },
  },
  // committed, by a change that leaves this server's stream streaming (another node's edit): nothing changes.
  'committed (the stream streams on)': {
    event: (machine) => machine.generation.committed(() => true, false),
    cells: {
      idle: { next: 'idle', idles: 1 },
      // Nothing streams here and the change starts nothing: the lock is let go.
      held: { next: 'idle', check: lockIsFree },
      streaming: { next: 'streaming', check: lockIsHeld },
      halting: { next: 'halting', check: lockIsHeld },
      ended: { next: 'ended', check: lockIsHeld },
    },
  },
  // abandon: the answer the lock was taken for will not be committed.
  abandon: {
    event: (machine) => machine.generation.abandon(),
    cells: {
      idle: { next: 'idle' },
      held: { next: 'idle', check: lockIsFree },
      // A stream still holds the lock: it is let go only when that stream's end or cut is committed.
      streaming: { next: 'streaming', check: lockIsHeld },
      halting: { next: 'halting', check: lockIsHeld },
      ended: { next: 'ended', check: lockIsHeld },
    },
  },
  // lose: another server took the lock over; the stream stops writing and nothing of it is committed here.
  lose: {
    event: (machine) => machine.generation.lose(),
    cells: {
      idle: { next: 'idle' },
      // No stream to stop: the lock is left to the link, which lost it.
      held: { next: 'held' },
      streaming: { next: 'idle', check: streamHalted },
      halting: { next: 'idle', check: (machine) => expect(machine.forgotten).toEqual(['node_a']) },
      ended: { next: 'idle', check: (machine) => expect(machine.forgotten).toEqual(['node_a']) },
    },
  },
};

describe('the generation state machine, every state × every event', () => {
  for (const [name, { event, cells }] of Object.entries(EVENTS)) {
    for (const state of STATES) {
      const cell = cells[state];
      it(`${state} --${name}--> ${cell.next}`, async () => {
        const machine = await machineIn(state);
        const idledBefore = machine.idled;
        const result = await event(machine);
        expect(machine.generation.state.name).toBe(cell.next);
        // Leaving for idle is the one meaning of letting the lock go, and says so once.
        expect(machine.idled - idledBefore).toBe(cell.idles ?? (cell.next === 'idle' && state !== 'idle' ? 1 : 0));
        await cell.check?.(machine, result);
      });
    }
  }

  it('refuses a claim with THREAD_BUSY while another engine of the thread holds the lock, and stays idle', async () => {
    const machine = await machineIn('idle');
    expect(await machine.rival.claimGeneration()).toBe(true);
    await expect(machine.generation.claim()).rejects.toMatchObject({ code: ErrorCode.THREAD_BUSY });
    expect(machine.generation.state.name).toBe('idle');
  });

  it('holds answers side by side: one halted or ended leaves the others streaming, the lock held until the last', async () => {
    const machine = await machineIn('held');
    const first = answerStream('node_a');
    const second = answerStream('node_b');
    onTestFinished(() => {
      first.stream.halt();
      second.stream.halt();
    });
    machine.generation.start(first.stream, second.stream);
    expect(machine.generation.streams).toEqual([first.stream, second.stream]);
    expect(machine.generation.halt({ content: 0 }, second.stream)).toBeDefined();
    expect(machine.generation.stateOf('node_b')?.name).toBe('halting');
    expect(machine.generation.stateOf('node_a')?.name).toBe('streaming');
    // The halted answer's cut is committed; the other streams on and keeps the lock.
    machine.generation.committed((nodeId) => nodeId === 'node_a', true);
    expect(machine.generation.streams).toEqual([first.stream]);
    expect(machine.forgotten).toEqual(['node_b']);
    await lockIsHeld(machine);
    machine.generation.committed(() => false, false);
    expect(machine.generation.state.name).toBe('idle');
    await lockIsFree(machine);
  });

  it('loses every answer side by side at once when another server takes the lock over', async () => {
    const machine = await machineIn('held');
    const first = answerStream('node_a');
    const second = answerStream('node_b');
    machine.generation.start(first.stream, second.stream);
    machine.generation.lose();
    expect(machine.generation.state.name).toBe('idle');
    expect(machine.forgotten).toEqual(['node_a', 'node_b']);
    await new Promise<void>((resolve) => queueMicrotask(resolve));
    expect(first.model.calls[0]?.signal.aborted).toBe(true);
    expect(second.model.calls[0]?.signal.aborted).toBe(true);
  });
});
