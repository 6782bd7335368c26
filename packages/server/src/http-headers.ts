/** A Host header fit to be named in the policy: a DNS name or IP literal and a port, nothing that could add a directive. */
const PLAIN_HOST = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/**
 * The page may run only its own scripts and styles, talk only to its own origin (the session socket included,
 * named with ws:/wss: for browsers that do not count them as 'self'), show no frame and be framed by none, and
 * send no referrer: a link in a model's answer must not tell another site which page it was clicked on. Images come
 * from the origin (the attachments a message carries), `data:`, or `blob:`: the preview of a file the person is
 * attaching, which only the page's own scripts can make, from bytes the person chose.
 */
export function securityHeaders(host: string | undefined): Record<string, string> {
  const socket = host !== undefined && PLAIN_HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  const policy = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self'${socket}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    'Content-Security-Policy': policy,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cross-Origin-Opener-Policy': 'same-origin',
  };
}
