import { serveRequests } from './bench-process.js';
import { Member } from './fanout-member.js';

/** What the fan-out measure asks of a process of members: each request names the members by their place. */
export interface MembersConnect {
  urls: string[];
  /** The members' places among all of the measure's members, each connecting to `urls[place % urls.length]`. */
  places: number[];
}

const members = new Map<number, Member>();

/** The members at places below `count`: those of a thread of `count` members (the owner, place 0, is elsewhere). */
function within(count: number): Member[] {
  return [...members].filter(([place]) => place < count).map(([, member]) => member);
}

/**
 * Members of the fan-out measure in a process of their own (bench/src/measure-fanout.ts), so that a hundred sockets
 * decoding every chunk do not share one event loop: what is timed is the server, not the bench's own client.
 */
serveRequests(
  {},
  {
    connect: async ({ urls, places }: MembersConnect) => {
      for (const place of places) members.set(place, await Member.connect(urls[place % urls.length]!));
      return places.map((place) => members.get(place)!.did);
    },
    open: async ({ threadId, count }: { threadId: string; count: number }) => {
      await Promise.all(
        within(count).map((member) =>
          member.request({ type: 'CPP_THREAD_OPEN', payload: { threadId, patches: true } }, 'CPP_SYNC_GRAPH'),
        ),
      );
    },
    record: ({ count }: { count: number }) => {
      for (const member of within(count)) member.delays = [];
    },
    delays: () => {
      const delays: number[] = [];
      for (const member of members.values()) {
        if (member.delays) delays.push(...member.delays);
        member.delays = undefined;
      }
      return delays;
    },
    ends: ({ nodeId, count }: { nodeId: string; count: number }) =>
      Promise.all(within(count).map((member) => member.end(nodeId))),
    stop: () => {
      for (const member of members.values()) member.close();
    },
  },
);
