interface SiblingSwitcherProps {
  index: number;
  count: number;
  onShow(offset: number): void;
}

/** ‹ 2/3 › at a fork: the other answers and prompts given at this point of the conversation. */
export function SiblingSwitcher({ index, count, onShow }: SiblingSwitcherProps) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: two buttons and a count inside a line of text; a fieldset would be a block of a form
    <span className="siblings" role="group" aria-label={`Branch ${index + 1} of ${count}`}>
      <button
        type="button"
        className="quiet"
        tabIndex={-1}
        aria-label="Previous branch"
        disabled={index === 0}
        onClick={() => onShow(-1)}
      >
        ‹
      </button>
      <span className="siblings-position" aria-hidden="true">
        {index + 1}/{count}
      </span>
      <button
        type="button"
        className="quiet"
        tabIndex={-1}
        aria-label="Next branch"
        disabled={index === count - 1}
        onClick={() => onShow(1)}
      >
        ›
      </button>
    </span>
  );
}
