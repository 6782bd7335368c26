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

/** Indentation stops here: a tree deeper than this reads as a list of its deeper branches. */
const MAX_DEPTH = 8;

/**
 * The page of a share link: the snapshot as plain HTML (no script, so it reads anywhere, without a socket). Every
 * text is escaped: a model's answer is data here, never markup. Each message of the tree is indented by its depth.
 */
export function sharePage(snapshot: ShareSnapshot, basePath: string, createdAt: number): string {
  const title = snapshot.title.trim() || 'A conversation';
  // A branch reads top to bottom; a tree is indented by depth, so that its branches show apart.
  const depths = snapshot.scope === 'tree' ? depthsOf(snapshot.nodes) : new Map<string, number>();
  const messages = snapshot.nodes.map((node) => message(node, depths.get(node.id) ?? 0, basePath)).join('\n');
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

function message(node: MessageNode, depth: number, basePath: string): string {
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
  return `<article class="message ${node.role} depth-${Math.min(depth, MAX_DEPTH)}" data-node-id="${escapeHtml(node.id)}">
<h2>${who}${status}</h2>
${files ? `<ul class="files">${files}</ul>` : ''}<div class="text">${escapeHtml(node.content)}</div>
</article>`;
}

/** How deep each node is among those kept: 0 for a node whose parent is not kept (a first prompt). */
function depthsOf(nodes: readonly MessageNode[]): Map<string, number> {
  const depths = new Map<string, number>();
  for (const node of nodes) {
    const parent = node.parentId === null ? undefined : depths.get(node.parentId);
    depths.set(node.id, parent === undefined ? 0 : parent + 1);
  }
  return depths;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

export const SHARE_STYLESHEET = `body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2127; background: #f6f7f9; }
main { max-width: 48rem; margin: 0 auto; padding: 1.5rem 1rem 4rem; }
.note { color: #5d6673; }
.message { background: #fff; border: 1px solid #dfe3e8; border-radius: 0.75rem; padding: 0.5rem 1rem; margin: 0.75rem 0; }
.message.user { background: #eef2ff; }
.message h2 { font-size: 0.85rem; margin: 0.25rem 0; color: #5d6673; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }
.files { list-style: none; padding: 0; margin: 0.25rem 0; }
.files img { max-width: 100%; max-height: 20rem; }
${Array.from({ length: MAX_DEPTH }, (_, index) => `.depth-${index + 1} { margin-left: ${(index + 1) * 1.25}rem; }`).join('\n')}
@media (prefers-color-scheme: dark) {
  body { color: #e6e9ee; background: #15181d; }
  .message { background: #1d2127; border-color: #323842; }
  .message.user { background: #232a3d; }
  .note, .message h2 { color: #9aa4b2; }
}
`;
