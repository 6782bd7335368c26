import { useCallback, useLayoutEffect, useState } from 'react';

/** The rows to draw, `[start, end)`, and the room the rows left out take above and below them. */
export interface RowWindow {
  start: number;
  end: number;
  before: number;
  after: number;
}

/** Drawn beyond what shows, above and below, so that a scroll finds its rows there already. */
const MARGIN_PX = 800;
/** Until a row has been drawn and measured. */
const ROW_ESTIMATE_PX = 56;
/** Drawn at first, before the scroll container is known. */
const FIRST_ROWS = 40;

/**
 * Which of `count` rows to draw: those within the scroll container's view, plus a margin, so that the DOM holds a
 * few dozen rows whatever the count. Rows are taken as one height, the mean of those drawn (measured at the first draw
 * and at each new size), so that the room left above and below stays consistent with what a scroll shows. `element`
 * holds the drawn rows (each marked `data-row`), as a callback ref gives it; the scroll container is its nearest
 * ancestor that scrolls.
 */
export function useRowWindow(element: HTMLElement | null, count: number): RowWindow {
  const [view, setView] = useState({ top: 0, height: 0, rowHeight: ROW_ESTIMATE_PX, known: false });

  /**
   * Where the view is; the height of a row is taken again only when asked (`rowsChanged`: the first draw, a new
   * size), not at every scroll, so that the rows drawn never feed back into which rows are drawn.
   */
  const measure = useCallback(
    (rowsChanged: boolean) => {
      const scroller = element && scrollParent(element);
      if (!element || !scroller) return;
      const top = scroller.scrollTop - (element.getBoundingClientRect().top - scroller.getBoundingClientRect().top);
      setView((last) => {
        const rowHeight = rowsChanged || !last.known ? (meanRowHeight(element) ?? last.rowHeight) : last.rowHeight;
        const same =
          last.known &&
          Math.abs(last.top - top) < 1 &&
          last.height === scroller.clientHeight &&
          last.rowHeight === rowHeight;
        return same ? last : { top, height: scroller.clientHeight, rowHeight, known: true };
      });
    },
    [element],
  );

  useLayoutEffect(() => {
    const scroller = element && scrollParent(element);
    if (!scroller) return;
    const scrolled = () => measure(false);
    const resized = new ResizeObserver(() => measure(true));
    scroller.addEventListener('scroll', scrolled, { passive: true });
    resized.observe(scroller);
    measure(true);
    return () => {
      scroller.removeEventListener('scroll', scrolled);
      resized.disconnect();
    };
  }, [element, measure]);

  if (!view.known) {
    const end = Math.min(count, FIRST_ROWS);
    return { start: 0, end, before: 0, after: (count - end) * ROW_ESTIMATE_PX };
  }
  const { top, height, rowHeight } = view;
  const start = clamp(Math.floor((top - MARGIN_PX) / rowHeight), 0, count);
  const end = clamp(Math.ceil((top + height + MARGIN_PX) / rowHeight), start, count);
  return { start, end, before: start * rowHeight, after: (count - end) * rowHeight };
}

/** The mean height of the rows drawn in `element`, room between them included; none while none is drawn. */
function meanRowHeight(element: HTMLElement): number | undefined {
  const rows = element.querySelectorAll('[data-row]');
  if (rows.length === 0) return undefined;
  const first = rows[0]!.getBoundingClientRect();
  const last = rows[rows.length - 1]!.getBoundingClientRect();
  const height = (last.bottom - first.top) / rows.length;
  return height > 0 ? height : undefined;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}

/** The nearest ancestor whose content scrolls. */
function scrollParent(element: HTMLElement): HTMLElement | null {
  for (let parent = element.parentElement; parent; parent = parent.parentElement) {
    const { overflowY } = getComputedStyle(parent);
    if (overflowY === 'auto' || overflowY === 'scroll') return parent;
  }
  return null;
}
