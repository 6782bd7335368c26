import { CloseCode } from '@promethea/cpp-protocol';
import { CPPServer } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { ApplicationServer, echoes } from '../support/application-server.js';
import { openThread } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';

let application: ApplicationServer;

afterEach(() => application.close());

describe('CPPServer attached to an existing http.Server', () => {
  it("serves CPP on its path and leaves the application's routes and upgrades alone, also after close()", async () => {
    application = await ApplicationServer.start();
    const { host, http } = application;
    const server = new CPPServer({ server: http });
    await server.ready;
    expect(server.url).toBe(`ws://localhost:${host.split(':')[1]}/v1/cpp/session`);

    const client = await RawClient.connect(`ws://${host}/v1/cpp/session`);
    expect((await openThread(client)).version).toBe(0);
    expect(await (await fetch(`http://${host}/anything`)).text()).toBe('the application');
    expect(await echoes(`ws://${host}/echo`)).toBe('ping');

    await server.close();
    expect(await client.closed).toBe(CloseCode.GOING_AWAY);
    expect(http.listening).toBe(true);
    expect(await (await fetch(`http://${host}/`)).text()).toBe('the application');
    expect(await echoes(`ws://${host}/echo`)).toBe('ping');
  });
});
