import type { MessageNode, ShareScope } from '@promethea/cpp-protocol';

/** What a share link keeps of its thread when it is made (docs/PROTOCOL.md §29.10). */
export interface ShareSnapshot {
  title: string;
  scope: ShareScope;
  /** Branch: root to head, in that order. Tree: every node, each parent before its children. */
  nodes: MessageNode[];
}

/** Where a share link's page takes its look from: a file of its own, since the page's policy allows no inline style. */
export const SHARE_STYLESHEET_PATH = '/share/page.css';

/** Indentation stops here: branches deeper than this are told apart by their labels alone. */
const MAX_LEVEL = 8;

/** An answer's Markdown as HTML fit to put in the page as it is (share-markdown.ts, loaded with the first page). */
export type MarkdownRenderer = (text: string) => string;

/**
 * The page of a share link: the snapshot as plain HTML (no script, so it reads anywhere, without a socket). A
 * person's message is shown as the text it is; an answer's Markdown is rendered, by a renderer that escapes any
 * HTML in it: a model's answer is data here, never markup.
 */
export function sharePage(
  snapshot: ShareSnapshot,
  basePath: string,
  createdAt: number,
  renderMarkdown: MarkdownRenderer,
): string {
  const title = snapshot.title.trim() || 'A conversation';
  // A branch reads top to bottom; a tree too, but each place where it forks starts its branches indented and named.
  const forks = snapshot.scope === 'tree' ? forksOf(snapshot.nodes) : new Map<string, Fork>();
  const messages = snapshot.nodes
    .map((node) => {
      const fork = forks.get(node.id);
      const article = message(node, fork?.level ?? 0, basePath, renderMarkdown);
      if (!fork?.of) return article;
      const label = `<p class="branch level-${Math.min(fork.level, MAX_LEVEL)}">Branch ${fork.index} of ${fork.of}</p>`;
      return `${label}\n${article}`;
    })
    .join('\n');
  const what = snapshot.scope === 'tree' ? 'every branch of the conversation' : 'one branch of the conversation';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="${SHARE_STYLESHEET_PATH}">
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
<p class="note">A read-only copy of ${what}, as it was on <time datetime="${new Date(createdAt).toISOString()}">${new Date(createdAt).toUTCString()}</time>.</p>
${messages || '<p class="note">No messages.</p>'}
</main>
</body>
</html>
`;
}

function message(node: MessageNode, level: number, basePath: string, renderMarkdown: MarkdownRenderer): string {
  const who = node.role === 'user' ? 'User' : `Assistant${node.model ? ` · ${escapeHtml(node.model)}` : ''}`;
  const status = node.status === 'completed' ? '' : ` <span class="status">(${escapeHtml(node.status)})</span>`;
  const files = (node.attachments ?? [])
    .map((file) => {
      const href = `${basePath}/attachments/${encodeURIComponent(file.id)}`;
      return file.mediaType.startsWith('image/')
        ? `<li><img src="${href}" alt="${escapeHtml(file.name)}"></li>`
        : `<li><a href="${href}">${escapeHtml(file.name)}</a></li>`;
    })
    .join('');
  const text =
    node.role === 'user'
      ? `<div class="text">${escapeHtml(node.content)}</div>`
      : `<div class="markdown">${renderMarkdown(node.content)}</div>`;
  return `<article class="message ${node.role} level-${Math.min(level, MAX_LEVEL)}" data-node-id="${escapeHtml(node.id)}">
<h2>${who}${status}</h2>
${files ? `<ul class="files">${files}</ul>` : ''}${text}
</article>`;
}

/** Where a node of a tree stands: how far it is indented, and which of its parent's branches it starts, if any. */
interface Fork {
  level: number;
  /** The branch it starts, counted from 1, of how many: absent for the one child of its parent. */
  index?: number;
  of?: number;
}

/**
 * Each node's place among those kept. A conversation that does not fork stays at the left, however long; each
 * child of a node with several starts a branch one level in (first prompts, when there are several, are branches
 * too, at the left).
 */
function forksOf(nodes: readonly MessageNode[]): Map<string, Fork> {
  const kept = new Set(nodes.map((node) => node.id));
  const parentOf = (node: MessageNode) => (node.parentId !== null && kept.has(node.parentId) ? node.parentId : null);
  const childCount = new Map<string | null, number>();
  for (const node of nodes) childCount.set(parentOf(node), (childCount.get(parentOf(node)) ?? 0) + 1);
  const forks = new Map<string, Fork>();
  const seen = new Map<string | null, number>();
  for (const node of nodes) {
    const parentId = parentOf(node);
    const of = childCount.get(parentId)!;
    const index = (seen.get(parentId) ?? 0) + 1;
    seen.set(parentId, index);
    const parentLevel = parentId === null ? -1 : forks.get(parentId)!.level;
    forks.set(node.id, of === 1 ? { level: Math.max(parentLevel, 0) } : { level: parentLevel + 1, index, of });
  }
  return forks;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** The web UI's palette and its look of messages and of Markdown (apps/web/src/styles.css), in light and dark. */
export const SHARE_STYLESHEET = `:root { --bg: #f6f7f9; --surface: #fff; --surface-2: #eef0f4; --text: #1b1f24; --muted: #5d6673; --border: #d8dde4; --accent: #3b5bdb; --user-bg: #e7ecff; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #15181d; --surface: #1d2127; --surface-2: #272c34; --text: #e6e9ee; --muted: #9aa4b2; --border: #343a44; --accent: #748ffc; --user-bg: #26305a; }
}
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--text); background: var(--bg); }
main { max-width: 48rem; margin: 0 auto; padding: 1.5rem 1rem 4rem; }
a { color: var(--accent); }
.note, .branch { color: var(--muted); }
.branch { font-size: 0.85rem; font-weight: 600; margin: 1.25rem 0 -0.25rem; padding-left: 0.5rem; border-left: 3px solid var(--accent); }
.message { background: var(--surface); border: 1px solid var(--border); border-radius: 0.75rem; padding: 0.5rem 1rem; margin: 0.75rem 0; overflow-wrap: anywhere; }
.message.user { background: var(--user-bg); }
.message h2 { font-size: 0.85rem; margin: 0.25rem 0; color: var(--muted); }
.text { white-space: pre-wrap; }
.files { list-style: none; padding: 0; margin: 0.25rem 0; }
.files img { max-width: 100%; max-height: 20rem; }
.markdown > :first-child { margin-top: 0.25rem; }
.markdown > :last-child { margin-bottom: 0.25rem; }
.markdown h1, .markdown h2, .markdown h3, .markdown h4, .markdown h5, .markdown h6 { font-size: 1.05rem; line-height: 1.25; margin: 0.9rem 0 0.4rem; color: inherit; }
.markdown h1 { font-size: 1.3rem; }
.markdown h2 { font-size: 1.15rem; }
.markdown code { font-family: ui-monospace, monospace; font-size: 0.9em; }
.markdown :not(pre) > code { padding: 0.1em 0.3em; border-radius: 4px; background: var(--surface-2); }
.markdown pre { white-space: pre-wrap; padding: 0.5rem 0.75rem; margin: 0.6rem 0; border: 1px solid var(--border); border-radius: 8px; background: var(--surface-2); }
.markdown table { display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse; margin: 0.6rem 0; font-size: 0.95em; }
.markdown th, .markdown td { border: 1px solid var(--border); padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
.markdown th { background: var(--surface-2); font-weight: 600; }
.markdown .align-center { text-align: center; }
.markdown .align-right { text-align: right; }
.markdown blockquote { margin: 0.6rem 0; padding: 0.1rem 0.9rem; border-left: 3px solid var(--border); color: var(--muted); }
.markdown blockquote > p { margin: 0.3rem 0; }
${Array.from({ length: MAX_LEVEL }, (_, index) => `.level-${index + 1} { margin-left: ${(index + 1) * 1.25}rem; }`).join('\n')}
`;
