import { CPPClient, DidKeyIdentity } from '@promethea/cpp-client';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { RenderedPages } from '../../src/auth/share-links.js';
import { securityHeaders } from '../../src/http-handler.js';
import { completion, expectError, openThread, prompt } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';
import { connectAs } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { pngImage } from '../support/test-files.js';

// The renderer as it is, watched: a page read again is not rendered again.
const rendered = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/auth/share-markdown.js', async (original) => {
  const { renderMarkdown } = await original<typeof import('../../src/auth/share-markdown.js')>();
  return {
    renderMarkdown: (text: string) => {
      rendered.count += 1;
      return renderMarkdown(text);
    },
  };
});

const fixture = useServer();
const alice = TestIdentity.generate();
const bob = TestIdentity.generate();

async function shareLink(owner: RawClient, threadId: string, scope: 'branch' | 'tree', id = 'share') {
  owner.send('CPP_SHARE_LINK_CREATE', { threadId, scope }, { id });
  return (await owner.next('CPP_SHARE_LINK')).payload;
}

/** The page as anyone gets it: plain HTTP, no identity, no socket. */
function read(path: string): Promise<Response> {
  return fetch(new URL(path, fixture.server.url.replace(/^ws/, 'http')));
}

describe('a read-only share link', () => {
  it('serves a snapshot of the active branch to anyone, with the app’s policy, until its owner revokes it', async () => {
    await fixture.start({ auth: 'did-key' });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner, { patches: true });
    const first = await prompt(owner, threadId, 'Is <b>this</b> & that "escaped"?');
    await completion(owner, threadId, first.assistantNodeId);

    const made = await shareLink(owner, threadId, 'branch');
    expect(made.token).toMatch(/^cppshr_[A-Za-z0-9_-]{43}$/);
    expect(made.path).toBe(`/share/${made.token}`);
    const page = await read(made.path);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(securityHeaders(undefined)['Content-Security-Policy']);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('Is &#60;b&#62;this&#60;/b&#62; &#38; that &#34;escaped&#34;?');
    expect(html).not.toContain('<b>this</b>');
    expect(html).toContain(`data-node-id="${first.assistantNodeId}"`);
    expect(html).not.toContain('<script');
    expect((await read('/share/page.css')).status).toBe(200);

    // A snapshot: what comes after it is not on the page.
    const later = await prompt(owner, threadId, 'Said after the link was made');
    await completion(owner, threadId, later.assistantNodeId);
    expect(await (await read(made.path)).text()).not.toContain('Said after the link was made');

    owner.send('CPP_SHARE_LINK_LIST', { threadId });
    expect((await owner.next('CPP_SHARE_LINKS')).payload.links).toEqual([made.link]);
    owner.send('CPP_SHARE_LINK_REVOKE', { threadId, linkId: made.link.linkId });
    expect((await owner.next('CPP_SHARE_LINKS')).payload.links).toEqual([]);
    const revoked = await read(made.path);
    expect(revoked.status).toBe(404);
    expect(await revoked.text()).toBe(await (await read(`/share/cppshr_${'A'.repeat(43)}`)).text());
  });

  it('of the whole tree shows every branch, each fork indented and its branches named; deleting the thread takes its links', async () => {
    await fixture.start({ auth: 'did-key' });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner, { patches: true });
    const first = await prompt(owner, threadId, 'First branch');
    await completion(owner, threadId, first.assistantNodeId);
    const below = await prompt(owner, threadId, 'Below the first answer');
    await completion(owner, threadId, below.assistantNodeId);
    const beside = await prompt(owner, threadId, 'Beside it', { parentNodeId: first.assistantNodeId });
    await completion(owner, threadId, beside.assistantNodeId);
    const second = await prompt(owner, threadId, 'Second branch', { parentNodeId: null });
    await completion(owner, threadId, second.assistantNodeId);

    const tree = await shareLink(owner, threadId, 'tree');
    const branch = await shareLink(owner, threadId, 'branch', 'branch');
    /** The page's branch labels and messages in order, each with its indentation. */
    const shown = async (path: string) =>
      [
        ...(await (await read(path)).text()).matchAll(
          /<p class="branch level-(\d)">([^<]+)<\/p>|<article class="message \w+ level-(\d)" data-node-id="([^"]+)"/g,
        ),
      ].map(([, labelLevel, label, level, nodeId]) => (label ? `${labelLevel} ${label}` : `${level} ${nodeId}`));
    expect(await shown(tree.path)).toEqual([
      '0 Branch 1 of 2',
      `0 ${first.userNodeId}`,
      `0 ${first.assistantNodeId}`,
      '1 Branch 1 of 2',
      `1 ${below.userNodeId}`,
      `1 ${below.assistantNodeId}`,
      '1 Branch 2 of 2',
      `1 ${beside.userNodeId}`,
      `1 ${beside.assistantNodeId}`,
      '0 Branch 2 of 2',
      `0 ${second.userNodeId}`,
      `0 ${second.assistantNodeId}`,
    ]);
    // One branch, however long, is not indented and names no branch.
    expect(await shown(branch.path)).toEqual([`0 ${second.userNodeId}`, `0 ${second.assistantNodeId}`]);

    owner.send('CPP_THREAD_DELETE', { threadId });
    await owner.next('CPP_THREAD_DELETED');
    expect((await read(tree.path)).status).toBe(404);
  });

  it("renders an answer's Markdown, with any HTML in it shown as text and no link that runs script; a prompt stays text", async () => {
    const answer = [
      '# A heading',
      '',
      '- one',
      '- two',
      '',
      '```ts',
      'const x = a < b;',
      '```',
      '',
      '| Name | Count |',
      '| ---- | ----: |',
      '| pears | 3 |',
      '',
      'Raw <script>alert(1)</script> and <img src=x onerror=alert(2)> stay text.',
      '[a link](https://example.org/page "Its title") [bad](javascript:alert(3)) [encoded](jav&#x61;script:alert(4))',
      '<javascript:alert(5)> [data](data:text/html;base64,PHNjcmlwdD4=) ![a tracker](https://evil.example/t.png?q=secret)',
    ].join('\n');
    await fixture.start({ auth: 'did-key', model: new ScriptedModel({ chunks: [answer] }, { gated: false }) });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner, { patches: true });
    const asked = await prompt(owner, threadId, '# Not a heading\n- nor a list <i>x</i>');
    await completion(owner, threadId, asked.assistantNodeId);
    const { path } = await shareLink(owner, threadId, 'branch');
    const page = await read(path);
    expect(page.headers.get('content-security-policy')).toBe(securityHeaders(undefined)['Content-Security-Policy']);
    const html = await page.text();

    // Rendered once: read again, the page is the one kept, the link still checked in the store.
    const renders = rendered.count;
    expect(renders).toBeGreaterThan(0);
    expect(await (await read(path)).text()).toBe(html);
    expect(rendered.count).toBe(renders);

    const [, asking] = html.match(/<article class="message user[^>]*>([\s\S]*?)<\/article>/)!;
    expect(asking).toContain('<div class="text"># Not a heading\n- nor a list &#60;i&#62;x&#60;/i&#62;</div>');
    const [, answered] = html.match(/<article class="message assistant[^>]*>([\s\S]*?)<\/article>/)!;
    expect(answered).toContain('<h1>A heading</h1>');
    expect(answered).toContain('<ul>\n<li>one</li>\n<li>two</li>\n</ul>');
    expect(answered).toContain('<pre><code class="language-ts">const x = a &lt; b;\n</code></pre>');
    expect(answered).toContain('<th>Name</th>\n<th class="align-right">Count</th>');
    expect(answered).toContain('<td>pears</td>\n<td class="align-right">3</td>');
    expect(answered).toContain(
      'Raw &lt;script&gt;alert(1)&lt;/script&gt; and &lt;img src=x onerror=alert(2)&gt; stay text.',
    );
    expect(answered).toContain(
      '<a href="https://example.org/page" title="Its title" target="_blank" rel="noopener noreferrer nofollow">a link</a>',
    );
    // Every tag on the page: no script, no inline handler or style, no image but the page's own, no link but https.
    const tags = html.match(/<[a-z][^>]*>/gi)!;
    expect(tags.filter((tag) => /^<(script|iframe|object|embed|svg|style)\b|\son\w+=|\sstyle=/i.test(tag))).toEqual([]);
    expect(tags.filter((tag) => tag.startsWith('<img'))).toEqual([]);
    expect(answered).toContain('a tracker');
    const links = tags.filter((tag) => tag.startsWith('<a '));
    expect(links).toHaveLength(1);
    expect(answered).toContain('[bad](javascript:alert(3))');
  });

  it("is the owner's alone, and limited per identity", async () => {
    await fixture.start({ auth: 'did-key', limits: { maxShareLinksPerDid: 1 } });
    const owner = await connectAs(fixture, alice);
    const { threadId } = await openThread(owner);
    owner.send('CPP_MEMBER_ADD', { threadId, did: bob.did, role: 'writer' });
    await owner.next('CPP_MEMBERS');
    const member = await connectAs(fixture, bob);
    member.send('CPP_SHARE_LINK_CREATE', { threadId, scope: 'tree' }, { id: 'member' });
    await expectError(member, 'FORBIDDEN', { refId: 'member' });

    await shareLink(owner, threadId, 'tree');
    owner.send('CPP_SHARE_LINK_CREATE', { threadId, scope: 'branch' }, { id: 'second' });
    await expectError(owner, 'RATE_LIMITED', { refId: 'second' });
  });

  it('serves the files its messages carry as §27 serves them, and no other file', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = new CPPClient({
      endpoint: fixture.server.url,
      identity: await DidKeyIdentity.generate(),
      reconnect: false,
    });
    onTestFinished(() => client.close());
    const image = pngImage(2, 2);
    await client.openThread();
    await client.prompt({ userPrompt: 'See the chart', attachments: [{ name: 'chart.png', bytes: image }] });
    const other = await (await client.attachments()).upload({ name: 'other.png', bytes: pngImage(3, 3) });
    const { path } = await client.createShareLink('branch');

    const html = await (await read(path)).text();
    const [, src] = html.match(/<img src="([^"]+)" alt="chart.png">/)!;
    const file = await read(src!);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('content-security-policy')).toContain('sandbox');
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await file.arrayBuffer()).equals(Buffer.from(image))).toBe(true);
    expect((await read(`${path}/attachments/${other.id}`)).status).toBe(404);
  });
});

describe('the share pages a server keeps rendered', () => {
  it('are the most recently read that fit its allowance; a page larger than all of it is not kept', () => {
    const pages = new RenderedPages(10);
    pages.set('a', 'aaaa');
    pages.set('b', 'bbbb');
    expect(pages.get('a')).toBe('aaaa');
    pages.set('c', 'cccc');
    // b, read least recently, made room.
    expect([pages.get('a'), pages.get('b'), pages.get('c')]).toEqual(['aaaa', undefined, 'cccc']);
    pages.delete('a');
    pages.set('d', 'dddddd');
    expect([pages.get('c'), pages.get('d')]).toEqual(['cccc', 'dddddd']);
    pages.set('e', 'e'.repeat(11));
    expect([pages.get('c'), pages.get('d'), pages.get('e')]).toEqual(['cccc', 'dddddd', undefined]);
  });
});
