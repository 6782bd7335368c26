/** How the UI names another member of a shared thread: by the end of its DID, which is all it knows of them. */
export function memberName(did: string): string {
  return `Member …${did.slice(-8)}`;
}
