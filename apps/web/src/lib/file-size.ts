/** A file's size as people read it: "812 B", "48.2 KB", "10.0 MB" (powers of 1,024, as file managers count). */
export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

const TYPE_NAMES: Record<string, string> = {
  'image/png': 'PNG image',
  'image/jpeg': 'JPEG image',
  'image/webp': 'WebP image',
  'image/gif': 'GIF image',
  'application/pdf': 'PDF',
  'text/plain': 'Text',
};

/** A media type in words: "PDF", "PNG image"; an unknown one as it is. */
export function typeName(mediaType: string): string {
  return TYPE_NAMES[mediaType] ?? (mediaType || 'File');
}
