import type { MessageNode, ThreadGraph } from '@promethea/cpp-protocol';
import { getNode } from '@promethea/cpp-protocol';
import { useMemo } from 'react';
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

  return (
    <nav className="minimap" aria-label="Conversation tree">
      <h2 className="panel-title">Tree</h2>
      {layout.nodes.length === 0 ? (
        <p className="muted">The tree grows as you talk.</p>
      ) : (
        <div className="minimap-scroll">
          <div className="minimap-canvas" style={{ width, height }}>
            <svg width={width} height={height} aria-hidden="true">
              {layout.nodes.map((placed) => (
                <Edge key={placed.id} placed={placed} parent={placed.parentId === null ? undefined : positions.get(placed.parentId)} onBranch={branchIds.has(placed.id)} />
              ))}
            </svg>
            {layout.nodes.map((placed) => {
              const node = getNode(graph, placed.id);
              return node && <TreeNode key={placed.id} placed={placed} node={node} isHead={node.id === graph.activeHeadMessageId} onBranch={branchIds.has(node.id)} onJump={onJump} />;
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
  onJump(nodeId: string): void;
}

function TreeNode({ placed, node, isHead, onBranch, onJump }: TreeNodeProps) {
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
      onClick={() => onJump(node.id)}
    />
  );
}
