/** Line icons drawn in the text colour, 16 px: shapes a chat person already knows from other apps. */
const PATHS = {
  copy: 'M9 9h10v10H9zM5 15V5h10',
  check: 'M5 12l5 5 9-10',
  edit: 'M4 20h4L19 9l-4-4L4 16zM13 7l4 4',
  regenerate: 'M20 12a8 8 0 1 1-2.3-5.6M20 4v5h-5',
  continue: 'M5 12h13M13 6l6 6-6 6',
  anchor: 'M12 8v13M5 13a7 7 0 0 0 14 0M8 11h8M12 3a2.5 2.5 0 1 1 0 5 2.5 2.5 0 0 1 0-5',
  delete: 'M4 7h16M9 7V4h6v3M6 7l1 13h10l1-13',
  attach: 'M20 11.5l-8.4 8.4a5 5 0 0 1-7-7L13.2 4.3a3.4 3.4 0 0 1 4.8 4.8l-8.5 8.5a1.7 1.7 0 0 1-2.4-2.4l7.8-7.8',
  file: 'M6 3h8l4 4v14H6zM14 3v4h4',
} as const;

export type IconName = keyof typeof PATHS;

export function Icon({ name }: { name: IconName }) {
  return (
    <svg className="icon" width="16" height="16" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        d={PATHS[name]}
        fill="none"
        stroke="currentColor"
        strokeWidth="2"
        strokeLinecap="round"
        strokeLinejoin="round"
      />
    </svg>
  );
}
