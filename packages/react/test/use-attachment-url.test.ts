// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { pngImage } from '../../server/test/support/test-files.js';
import { useAttachmentUrl, useBranch, useCPP } from '../src/index.js';
import { endpointOf, startDemoServer } from './support/demo-server.js';
import { act, renderHook, waitFor } from './support/testing-library.js';

describe('files in React', () => {
  it('gives the URL of a prompt’s file, whose bytes a fetch gets, and an edit carries the file again', async () => {
    const server = await startDemoServer();
    const endpoint = endpointOf(server);
    const cppHook = renderHook(() => {
      const cpp = useCPP({ endpoint, did: 'did:key:z6MkAttachmentTest' });
      return { cpp, branch: useBranch(cpp.client, cpp.graph) };
    });
    await waitFor(() => expect(cppHook.result.current.cpp.connection).toBe('live'));
    const client = cppHook.result.current.cpp.client!;
    await act(() => client.openThread());
    const image = pngImage(2, 2);
    const sent = await act(() =>
      client.prompt({ userPrompt: 'See', attachments: [{ name: 'dot.png', bytes: image }] }),
    );
    const [file] = client.graph()!.nodes[sent.userNodeId]!.attachments!;

    const urlHook = renderHook(() => useAttachmentUrl(client, file!.id));
    await waitFor(() => expect(urlHook.result.current).toBeDefined());
    const served = await fetch(urlHook.result.current!);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(new Uint8Array(image));

    await act(() => cppHook.result.current.branch.edit(sent.userNodeId, 'See again', { attachments: [file!] }));
    const edited = Object.values(client.graph()!.nodes).find((node) => node.content === 'See again');
    expect(edited?.attachments).toEqual([file]);
    cppHook.unmount();
    urlHook.unmount();
    await server.close();
  });
});
