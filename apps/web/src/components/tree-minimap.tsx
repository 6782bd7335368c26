import type { MessageNode, ThreadGraph } from '@promethea/cpp-protocol';
import { firstPrompts, getNode } from '@promethea/cpp-protocol';
import {
  useCallback,
  useEffect,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type MouseEvent,
  type PointerEvent,
} from 'react';
import { layoutTree, type PlacedNode } from '../lib/tree-layout.js';

interface TreeMinimapProps {
  graph: ThreadGraph;
  /** The ids of the branch on screen. */
  branchIds: ReadonlySet<string>;
  onJump(nodeId: string): void;
}

/** Grid step in px at zoom 1: one row per turn, one column per branch; each node a pill with two lines of words. */
const CELL_WIDTH = 164;
const CELL_HEIGHT = 50;
const PILL_WIDTH = 152;
const PILL_HEIGHT = 40;
const ZOOMS = [0.5, 0.67, 0.8, 1, 1.25] as const;

/** More words than a pill's two lines hold: the pill's style cuts them where its room ends, with an ellipsis. */
function firstWords(text: string): string {
  const line = text
    .replace(/[#*_`>|[\]]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return line === '' ? '…' : line.slice(0, 80);
}

/** What a message says, for its pill: its text, or, for a prompt of files alone, the files' names. */
function wordsOf(node: MessageNode): string {
  if (node.content.trim() !== '' || !node.attachments?.length) return node.content;
  return node.attachments.map((file) => file.name).join(', ');
}

/** What a status looks like besides its colour: a glyph and a word for screen readers. */
const STATUS_MARK: Record<MessageNode['status'], { glyph: string; word: string }> = {
  completed: { glyph: '', word: '' },
  streaming: { glyph: '●', word: ', streaming' },
  interrupted: { glyph: '✂', word: ', interrupted' },
  failed: { glyph: '⚠', word: ', failed' },
};

/**
 * The whole conversation as a tree: the branch on screen, the head, a pivot's fork and each status stand out
 * (by shape and glyph, not colour alone). Zoom with − / +, pan by dragging or scrolling; the arrow keys walk it.
 */
export function TreeMinimap({ graph, branchIds, onJump }: TreeMinimapProps) {
  const layout = useMemo(() => layoutTree(graph), [graph]);
  const positions = useMemo(() => new Map(layout.nodes.map((placed) => [placed.id, placed])), [layout]);
  const [zoomIndex, setZoomIndex] = useState(ZOOMS.indexOf(1));
  const zoom = ZOOMS[zoomIndex]!;
  const width = layout.columns * CELL_WIDTH;
  const height = layout.rows * CELL_HEIGHT;
  const canvas = useRef<HTMLDivElement>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const drag = useRef<{ x: number; y: number; left: number; top: number; moved: boolean }>(undefined);
  // The tree is one tab stop (the node last focused, else the head); arrows walk it.
  const [focusedId, setFocusedId] = useState<string>();
  const stopId =
    focusedId !== undefined && graph.nodes[focusedId] ? focusedId : (graph.activeHeadMessageId ?? graph.rootNodeId);

  // Where the person is: the head, brought into the middle of the view when it moves, at each zoom, and when the
  // panel opens (its drawer on a narrow screen has no size while closed).
  // Only a move of the head (or a zoom) scrolls: every streamed chunk makes a new layout, and the person may be
  // looking around the tree meanwhile.
  const headId = graph.activeHeadMessageId;
  const head = headId === null ? undefined : positions.get(headId);
  const headColumn = head?.column;
  const headDepth = head?.depth;
  const hasTree = layout.nodes.length > 0;
  const showHead = useCallback(() => {
    const element = scroller.current;
    if (!element || headColumn === undefined || headDepth === undefined || element.clientWidth === 0) return;
    const { x, top } = anchorPoints({ column: headColumn, depth: headDepth });
    element.scrollLeft = x * zoom - element.clientWidth / 2;
    element.scrollTop = (top + PILL_HEIGHT / 2) * zoom - element.clientHeight / 2;
  }, [headColumn, headDepth, zoom]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new head, or the tree appearing, is a reason to scroll.
  useLayoutEffect(showHead, [showHead, headId, hasTree]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the scroll area exists once there is a tree.
  useEffect(() => {
    const element = scroller.current;
    if (!element) return;
    let shown = element.clientWidth > 0;
    const observer = new ResizeObserver(() => {
      const nowShown = element.clientWidth > 0;
      if (nowShown && !shown) showHead();
      shown = nowShown;
    });
    observer.observe(element);
    return () => observer.disconnect();
  }, [showHead, hasTree]);

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const id = (event.target as HTMLElement).dataset.nodeId;
    const node = id === undefined ? undefined : getNode(graph, id);
    if (!node) return;
    const next = neighbour(graph, node, event.key, branchIds);
    if (next === undefined) return;
    event.preventDefault();
    canvas.current?.querySelector<HTMLElement>(`[data-node-id="${next}"]`)?.focus();
  };

  // Drag to pan, as on a map; a drag that moved does not also click the node it started on.
  const onPointerDown = (event: PointerEvent<HTMLDivElement>) => {
    if (event.pointerType !== 'mouse' || !scroller.current) return;
    drag.current = {
      x: event.clientX,
      y: event.clientY,
      left: scroller.current.scrollLeft,
      top: scroller.current.scrollTop,
      moved: false,
    };
  };
  const onPointerMove = (event: PointerEvent<HTMLDivElement>) => {
    const start = drag.current;
    if (!start || !scroller.current || event.buttons !== 1) return;
    const dx = event.clientX - start.x;
    const dy = event.clientY - start.y;
    if (Math.abs(dx) + Math.abs(dy) > 4) start.moved = true;
    scroller.current.scrollLeft = start.left - dx;
    scroller.current.scrollTop = start.top - dy;
  };
  const onClickCapture = (event: MouseEvent) => {
    if (drag.current?.moved) event.stopPropagation();
    drag.current = undefined;
  };

  return (
    <nav className="minimap" aria-label="Conversation tree">
      <div className="minimap-head">
        <h2 className="panel-title">Tree</h2>
        {layout.nodes.length > 0 && (
          // biome-ignore lint/a11y/useSemanticElements: three buttons in the panel's title line; a fieldset would be a block of a form
          <span className="zoom" role="group" aria-label="Zoom">
            <button
              type="button"
              className="quiet"
              aria-label="Zoom out"
              disabled={zoomIndex === 0}
              onClick={() => setZoomIndex(zoomIndex - 1)}
            >
              −
            </button>
            <span className="zoom-level" aria-live="polite">
              {Math.round(zoom * 100)}%
            </span>
            <button
              type="button"
              className="quiet"
              aria-label="Zoom in"
              disabled={zoomIndex === ZOOMS.length - 1}
              onClick={() => setZoomIndex(zoomIndex + 1)}
            >
              +
            </button>
          </span>
        )}
      </div>
      <p className="minimap-help muted">
        Choose a message to show its branch: the chat goes on from that branch’s latest message.
      </p>
      {layout.nodes.length === 0 ? (
        <p className="muted">The tree grows as you talk.</p>
      ) : (
        <div
          ref={scroller}
          className="minimap-scroll"
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onClickCapture={onClickCapture}
        >
          <div className="minimap-sizer" style={{ width: width * zoom, height: height * zoom }}>
            {/* biome-ignore lint/a11y/noStaticElementInteractions: one listener for the node buttons inside (arrow keys move between them, as in a tree) */}
            <div
              ref={canvas}
              className="minimap-canvas"
              style={{ width, height, transform: `scale(${zoom})` }}
              onKeyDown={onKeyDown}
              onFocus={(event) => setFocusedId((event.target as HTMLElement).dataset.nodeId)}
            >
              <svg width={width} height={height} aria-hidden="true">
                {layout.nodes.map((placed) => (
                  <Edge
                    key={placed.id}
                    placed={placed}
                    parent={placed.parentId === null ? undefined : positions.get(placed.parentId)}
                    onBranch={branchIds.has(placed.id)}
                  />
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
        </div>
      )}
      <p className="minimap-legend muted" aria-hidden="true">
        <span className="legend-pill legend-user">you</span>
        <span className="legend-pill">assistant</span>
        <span className="legend-pill legend-head">head</span>
        <span>● streaming</span>
        <span>✂ cut (a pivot forks here)</span>
        <span>⚠ failed</span>
      </p>
    </nav>
  );
}

/** ↑ the parent, ↓ the child (the one on screen first), ←/→ the neighbouring sibling, Home the root, End the head. */
function neighbour(
  graph: ThreadGraph,
  node: MessageNode,
  key: string,
  branchIds: ReadonlySet<string>,
): string | undefined {
  const siblings =
    node.parentId === null
      ? firstPrompts(graph).map((first) => first.id)
      : (getNode(graph, node.parentId)?.childrenIds ?? [node.id]);
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

/** Where a pill's top centre and bottom centre are. */
function anchorPoints(placed: Pick<PlacedNode, 'column' | 'depth'>): { x: number; top: number; bottom: number } {
  const x = placed.column * CELL_WIDTH + CELL_WIDTH / 2;
  const top = placed.depth * CELL_HEIGHT + (CELL_HEIGHT - PILL_HEIGHT) / 2;
  return { x, top, bottom: top + PILL_HEIGHT };
}

function Edge({ placed, parent, onBranch }: { placed: PlacedNode; parent: PlacedNode | undefined; onBranch: boolean }) {
  if (!parent) return null;
  const from = anchorPoints(parent);
  const to = anchorPoints(placed);
  const middle = (from.bottom + to.top) / 2;
  // Down from the parent, across to the child's column, then down into it: a fork reads as a step to the right.
  const path = `M${from.x} ${from.bottom} L${from.x} ${middle} L${to.x} ${middle} L${to.x} ${to.top}`;
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
  const fork = node.childrenIds.length > 1;
  const classes = ['tree-node', `tree-${node.role}`, `status-${node.status}`];
  if (isHead) classes.push('is-head');
  if (onBranch) classes.push('on-branch');
  if (fork) classes.push('is-fork');
  const mark = STATUS_MARK[node.status];
  const label = `${node.role === 'user' ? 'You' : 'Assistant'}, turn ${placed.depth + 1}${isHead ? ', head' : ''}${mark.word}${fork ? `, ${node.childrenIds.length} branches` : ''}: ${wordsOf(node).slice(0, 60)}`;
  return (
    <button
      type="button"
      className={classes.join(' ')}
      style={{
        left: placed.column * CELL_WIDTH + (CELL_WIDTH - PILL_WIDTH) / 2,
        top: anchorPoints(placed).top,
        width: PILL_WIDTH,
        height: PILL_HEIGHT,
      }}
      aria-label={label}
      aria-current={isHead ? 'true' : undefined}
      title={label}
      data-node-id={node.id}
      tabIndex={isFocusStop ? 0 : -1}
      onClick={() => onJump(node.id)}
    >
      {mark.glyph && (
        <span className="tree-glyph" aria-hidden="true">
          {mark.glyph}
        </span>
      )}
      <span className="tree-label" aria-hidden="true">
        {firstWords(wordsOf(node))}
      </span>
    </button>
  );
}
