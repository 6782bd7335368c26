import { getNode, type MessageNode, type ThreadGraph } from '@promethea/cpp-protocol';

const PREVIEW_LENGTH = 60;

interface Line {
  nodeId: string;
  /** What is drawn left of this node's connector: the branches still open above it. */
  indent: string;
  connector: '' | '├─ ' | '└─ ';
}

/**
 * The thread as an indented tree with each node's id, role, status and the start of its text, the head marked.
 * A lone child continues at its parent's column, so a long linear conversation does not drift to the right;
 * only branch points indent. Iterative, so a deep thread cannot overflow the stack.
 */
export function formatTree(graph: ThreadGraph): string {
  if (graph.rootNodeId === null) return '(empty thread)';
  const output: string[] = [];
  const pending: Line[] = [{ nodeId: graph.rootNodeId, indent: '', connector: '' }];
  for (let line = pending.pop(); line; line = pending.pop()) {
    const node = getNode(graph, line.nodeId);
    if (!node) continue;
    output.push(`${line.indent}${line.connector}${describe(node)}${node.id === graph.activeHeadMessageId ? '  <- head' : ''}`);
    pending.push(...childLines(node, continuation(line)).reverse());
  }
  return output.join('\n');
}

function childLines(node: MessageNode, indent: string): Line[] {
  if (node.childrenIds.length === 1) return [{ nodeId: node.childrenIds[0]!, indent, connector: '' }];
  return node.childrenIds.map((nodeId, index) => ({ nodeId, indent, connector: index === node.childrenIds.length - 1 ? '└─ ' : '├─ ' }));
}

function continuation(line: Line): string {
  if (line.connector === '├─ ') return `${line.indent}│  `;
  if (line.connector === '└─ ') return `${line.indent}   `;
  return line.indent;
}

function describe(node: MessageNode): string {
  const text = node.content.replace(/\s+/g, ' ').trim();
  const preview = text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH - 1)}…` : text;
  return `${node.id} ${node.role} ${node.status} ${JSON.stringify(preview)}`;
}
