import type { MessageNode, ThreadGraph } from '@promethea/cpp-protocol';
import { getNode } from '@promethea/cpp-protocol';
import { useMemo, useRef, useState, type KeyboardEvent } from 'react';
import { layoutTree, type PlacedNode } from '../lib/tree-layout.js';

interface TreeMinimapProps {
  graph: ThreadGraph;
  /** The ids of the branch on screen. */
  branchIds: ReadonlySet<string>;
  onJump(nodeId: string): void;
}

/** Grid step in px: one row per turn, one column per branch. */
const CELL = 28;
/** Each node is a 24 px target (the smallest comfortable touch target), drawn as a smaller dot inside. */
const TARGET = 24;

/** The whole conversation as a tree: the branch on screen, the head and the live stream stand out. */
export function TreeMinimap({ graph, branchIds, onJump }: TreeMinimapProps) {
  const layout = useMemo(() => layoutTree(graph), [graph]);
  const positions = useMemo(() => new Map(layout.nodes.map((placed) => [placed.id, placed])), [layout]);
  const width = layout.columns * CELL;
  const height = layout.rows * CELL;
  const canvas = useRef<HTMLDivElement>(null);
  // The tree is one tab stop (the node last focused, else the head); arrows walk it.
  const [focusedId, setFocusedId] = useState<string>();
  const stopId = focusedId !== undefined && graph.nodes[focusedId] ? focusedId : (graph.activeHeadMessageId ?? graph.rootNodeId);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const id = (event.target as HTMLElement).dataset.nodeId;
    const node = id === undefined ? undefined : getNode(graph, id);
    if (!node) return;
    const next = neighbour(graph, node, event.key, branchIds);
    if (next === undefined) return;
    event.preventDefault();
    canvas.current?.querySelector<HTMLElement>(`[data-node-id="${next}"]`)?.focus();
  };

  return (
    <nav className="minimap" aria-label="Conversation tree">
      <h2 className="panel-title">Tree</h2>
      {layout.nodes.length === 0 ? (
        <p className="muted">The tree grows as you talk.</p>
      ) : (
        <div className="minimap-scroll">
          <div
            ref={canvas}
            className="minimap-canvas"
            style={{ width, height }}
            onKeyDown={onKeyDown}
            onFocus={(event) => setFocusedId((event.target as HTMLElement).dataset.nodeId)}
          >
            <svg width={width} height={height} aria-hidden="true">
              {layout.nodes.map((placed) => (
                <Edge key={placed.id} placed={placed} parent={placed.parentId === null ? undefined : positions.get(placed.parentId)} onBranch={branchIds.has(placed.id)} />
              ))}
            </svg>
            {layout.nodes.map((placed) => {
              const node = getNode(graph, placed.id);
              return (
                node && (
                  <TreeNode
                    key={placed.id}
                    placed={placed}
                    node={node}
                    isHead={node.id === graph.activeHeadMessageId}
                    onBranch={branchIds.has(node.id)}
                    isFocusStop={node.id === stopId}
                    onJump={onJump}
                  />
                )
              );
            })}
          </div>
        </div>
      )}
      <p className="minimap-legend muted" aria-hidden="true">
        <span className="legend-dot legend-user" /> you <span className="legend-dot legend-assistant" /> assistant <span className="legend-dot legend-head" /> head <span className="legend-dot legend-streaming" /> streaming
      </p>
    </nav>
  );
}

/** ↑ the parent, ↓ the child (the one on screen first), ←/→ the neighbouring sibling, Home the root. */
function neighbour(graph: ThreadGraph, node: MessageNode, key: string, branchIds: ReadonlySet<string>): string | undefined {
  const siblings = node.parentId === null ? [node.id] : (getNode(graph, node.parentId)?.childrenIds ?? [node.id]);
  const at = siblings.indexOf(node.id);
  switch (key) {
    case 'ArrowUp':
      return node.parentId ?? undefined;
    case 'ArrowDown':
      return node.childrenIds.find((id) => branchIds.has(id)) ?? node.childrenIds[0];
    case 'ArrowLeft':
      return siblings[at - 1];
    case 'ArrowRight':
      return siblings[at + 1];
    case 'Home':
      return graph.rootNodeId ?? undefined;
    case 'End':
      return graph.activeHeadMessageId ?? undefined;
    default:
      return undefined;
  }
}

function center(placed: PlacedNode): { x: number; y: number } {
  return { x: placed.column * CELL + CELL / 2, y: placed.depth * CELL + CELL / 2 };
}

function Edge({ placed, parent, onBranch }: { placed: PlacedNode; parent: PlacedNode | undefined; onBranch: boolean }) {
  if (!parent) return null;
  const from = center(parent);
  const to = center(placed);
  // Down from the parent half a row, across to the child's column, then down into it.
  const path = `M${from.x} ${from.y} L${from.x} ${from.y + CELL / 2} L${to.x} ${from.y + CELL / 2} L${to.x} ${to.y}`;
  return <path d={path} className={onBranch ? 'edge edge-on-branch' : 'edge'} />;
}

interface TreeNodeProps {
  placed: PlacedNode;
  node: MessageNode;
  isHead: boolean;
  onBranch: boolean;
  isFocusStop: boolean;
  onJump(nodeId: string): void;
}

function TreeNode({ placed, node, isHead, onBranch, isFocusStop, onJump }: TreeNodeProps) {
  const classes = ['tree-node', `tree-${node.role}`, `status-${node.status}`];
  if (isHead) classes.push('is-head');
  if (onBranch) classes.push('on-branch');
  const label = `${node.role === 'user' ? 'You' : 'Assistant'}, turn ${placed.depth + 1}${isHead ? ', head' : ''}${node.status === 'streaming' ? ', streaming' : ''}${node.status === 'interrupted' ? ', interrupted' : ''}: ${node.content.slice(0, 60)}`;
  return (
    <button
      type="button"
      className={classes.join(' ')}
      style={{ left: placed.column * CELL + (CELL - TARGET) / 2, top: placed.depth * CELL + (CELL - TARGET) / 2 }}
      aria-label={label}
      aria-current={isHead ? 'true' : undefined}
      title={label}
      data-node-id={node.id}
      tabIndex={isFocusStop ? 0 : -1}
      onClick={() => onJump(node.id)}
    />
  );
}
