/**
 * Keyboard moves inside the message list, which is a single tab stop: ↑/↓ (and Home/End) go from message to
 * message, →/← go through the focused message's buttons, Esc goes from a button back to its message. Returns
 * whether the key was one of these moves.
 */
export function moveFocus(list: HTMLElement, target: HTMLElement, key: string): boolean {
  const message = target.closest<HTMLElement>('article.message');
  // Keys typed into a field (editing a message) are text, not moves.
  if (!message || !list.contains(message) || target.matches('textarea, input')) return false;
  const messages = [...list.querySelectorAll<HTMLElement>('article.message')];
  const index = messages.indexOf(message);
  switch (key) {
    case 'ArrowDown':
      return focusMessage(messages[index + 1]);
    case 'ArrowUp':
      return focusMessage(messages[index - 1]);
    case 'Home':
      return focusMessage(messages[0]);
    case 'End':
      return focusMessage(messages.at(-1));
    case 'ArrowRight':
    case 'ArrowLeft': {
      const buttons = [...message.querySelectorAll<HTMLElement>('button:not(:disabled)')];
      if (buttons.length === 0) return false;
      const at = buttons.indexOf(target);
      const step = key === 'ArrowRight' ? 1 : -1;
      // From the message itself, → enters at the first button and ← at the last; past either end it wraps round.
      const next = at === -1 ? (step === 1 ? 0 : buttons.length - 1) : (at + step + buttons.length) % buttons.length;
      buttons[next]?.focus();
      return true;
    }
    case 'Escape':
      return target !== message && focusMessage(message);
    default:
      return false;
  }
}

function focusMessage(message: HTMLElement | undefined): boolean {
  message?.focus();
  return message !== undefined;
}
