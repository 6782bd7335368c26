import { firstPrompts, getNode, type MessageNode, type ThreadGraph } from '@promethea/cpp-protocol';

const PREVIEW_LENGTH = 60;

interface Line {
  nodeId: string;
  /** What is drawn left of this node's connector: the branches still open above it. */
  indent: string;
  connector: '' | '├─ ' | '└─ ';
}

/**
 * The thread as an indented tree, one numbered line per node with its id, role, status and the start of its text,
 * the head marked, and on an answer whose model did not read its whole branch (docs/PROTOCOL.md §28.3), which messages
 * it did not see. The numbers are the nodes' places in `treeOrder`, by which commands name them. A lone child
 * continues at its parent's column, so a long linear conversation does not drift to the right; only branch points
 * indent.
 */
export function formatTree(graph: ThreadGraph): string {
  const lines = treeOrder(graph);
  if (lines.length === 0) return '(empty thread)';
  const width = String(lines.length).length;
  const numbers = new Map(lines.map(({ node }, index) => [node.id, index + 1]));
  return lines
    .map(({ node, indent, connector }, index) => {
      const head = node.id === graph.activeHeadMessageId ? '  <- head' : '';
      const context = node.context
        ? `  [its model did not see ${node.context.omittedNodes} messages: it read the first, then from ${numbers.get(node.context.fromNodeId) ?? node.context.fromNodeId} on]`
        : '';
      return `${String(index + 1).padStart(width)}  ${indent}${connector}${describe(node)}${context}${head}`;
    })
    .join('\n');
}

/** The thread's nodes in the order the tree draws them (depth first), each with what is drawn left of it. Iterative, so a deep thread cannot overflow the stack. */
export function treeOrder(graph: ThreadGraph): (Line & { node: MessageNode })[] {
  const output: (Line & { node: MessageNode })[] = [];
  // The versions of an edited first prompt are drawn as siblings, as any prompt's versions are.
  const tops = firstPrompts(graph).map((node) => node.id);
  const pending: Line[] = siblingLines(tops, '').reverse();
  for (let line = pending.pop(); line; line = pending.pop()) {
    const node = getNode(graph, line.nodeId);
    if (!node) continue;
    output.push({ ...line, node });
    pending.push(...siblingLines(node.childrenIds, continuation(line)).reverse());
  }
  return output;
}

function siblingLines(nodeIds: readonly string[], indent: string): Line[] {
  if (nodeIds.length === 1) return [{ nodeId: nodeIds[0]!, indent, connector: '' }];
  return nodeIds.map((nodeId, index) => ({
    nodeId,
    indent,
    connector: index === nodeIds.length - 1 ? '└─ ' : '├─ ',
  }));
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
