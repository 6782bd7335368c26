import type { CPPClient } from '@promethea/cpp-client';
import type { MemberRole, ShareScope, ThreadMember } from '@promethea/cpp-protocol';
import { useShareLinks } from '@promethea/cpp-react';
import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';

interface SharePanelProps {
  client: CPPClient;
  threadId: string;
  report(error: unknown): void;
  /** Closes the panel; the focus goes back to where it was opened from. */
  onClose(): void;
}

/**
 * The owner shares the thread (docs/PROTOCOL.md §29): an invite link for someone whose DID it does not know, a
 * member added by DID, the members listed with a way to remove each. A link's token is shown this once. The focus
 * moves into the panel as it opens (it sits after the thread list, far from the Share button in the tab order); Esc
 * closes it.
 */
export function SharePanel({ client, threadId, report, onClose }: SharePanelProps) {
  const [members, setMembers] = useState<ThreadMember[]>();
  const [role, setRole] = useState<MemberRole>('writer');
  const [did, setDid] = useState('');
  const [link, setLink] = useState<string>();
  const [scope, setScope] = useState<ShareScope>('branch');
  const [readLink, setReadLink] = useState<string>();
  const shareLinks = useShareLinks(client, threadId);
  const firstControl = useRef<HTMLSelectElement>(null);

  useEffect(() => firstControl.current?.focus(), []);

  useEffect(() => {
    client.listMembers(threadId).then(({ members: listed }) => setMembers(listed), report);
  }, [client, threadId, report]);

  const invite = () =>
    client.createInvite(role, {}, threadId).then(({ token }) => {
      const { origin, pathname } = window.location;
      setLink(`${origin}${pathname}#/join/${token}`);
    }, report);

  const add = (event: FormEvent) => {
    event.preventDefault();
    client.addMember(did.trim(), role, threadId).then(({ members: listed }) => {
      setMembers(listed);
      setDid('');
    }, report);
  };

  const makeReadLink = () => shareLinks.create(scope).then(({ url }) => setReadLink(url), report);

  const remove = (member: string) =>
    client.removeMember(member, threadId).then(({ members: listed }) => setMembers(listed), report);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || event.defaultPrevented) return;
    // Esc closes this panel only: further up it would also close the phone's side panel or stop an answer.
    event.stopPropagation();
    onClose();
  };

  return (
    <section id="share-panel" className="share-panel" aria-labelledby="share-panel-title" onKeyDown={onKeyDown}>
      <div className="share-head">
        <h2 id="share-panel-title" className="panel-title">
          Share this conversation
        </h2>
        <button type="button" className="quiet" onClick={onClose}>
          Close
        </button>
      </div>
      <fieldset className="share-group">
        <legend>People, each with their own identity</legend>
        <div className="share-row">
          <label>
            Role{' '}
            <select
              ref={firstControl}
              className="share-control"
              value={role}
              onChange={(event) => setRole(event.target.value as MemberRole)}
            >
              <option value="writer">can write</option>
              <option value="reader">can only read</option>
            </select>
          </label>
          <button type="button" onClick={invite}>
            Create an invite link
          </button>
        </div>
        {link && (
          <input
            readOnly
            className="share-control share-url"
            aria-label="Invite link, for one person: it works once"
            value={link}
            onFocus={(event) => event.target.select()}
          />
        )}
        <form className="share-row" onSubmit={add}>
          <input
            className="share-control share-did"
            aria-label="DID to share with"
            placeholder="did:key:…"
            value={did}
            onChange={(e) => setDid(e.target.value)}
          />
          <button type="submit" disabled={!did.trim().startsWith('did:')}>
            Add
          </button>
        </form>
        <ul className="share-list" aria-label="Members">
          {members?.map((member) => (
            <li key={member.did} className="share-item">
              <span className="share-role">{member.role === 'writer' ? 'Writer' : 'Reader'}</span>{' '}
              <code className="share-member">{member.did}</code>{' '}
              <button
                type="button"
                className="quiet"
                aria-label={`Remove ${member.did}`}
                onClick={() => remove(member.did)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
        {members?.length === 0 && <p className="share-empty muted">No members yet: only you.</p>}
      </fieldset>
      <fieldset className="share-group share-links">
        <legend>Read-only link: anyone who has it can read, without signing in</legend>
        <div className="share-row">
          <label>
            Shows{' '}
            <select
              className="share-control"
              value={scope}
              onChange={(event) => setScope(event.target.value as ShareScope)}
            >
              <option value="branch">this branch</option>
              <option value="tree">every branch</option>
            </select>
          </label>
          <button type="button" onClick={makeReadLink}>
            Create a read-only link
          </button>
        </div>
        {readLink && (
          <input
            readOnly
            className="share-control share-url"
            aria-label="Read-only link, as the conversation is now"
            value={readLink}
            onFocus={(event) => event.target.select()}
          />
        )}
        <ul className="share-list" aria-label="Read-only links">
          {shareLinks.value?.map((shared) => (
            <li key={shared.linkId} className="share-item">
              {shared.scope === 'tree' ? 'Every branch' : 'One branch'}, made{' '}
              <time dateTime={new Date(shared.createdAt).toISOString()}>
                {new Date(shared.createdAt).toLocaleString()}
              </time>{' '}
              <button
                type="button"
                className="quiet"
                aria-label={`Revoke the read-only link made ${new Date(shared.createdAt).toLocaleString()}`}
                onClick={() => shareLinks.revoke(shared.linkId).catch(report)}
              >
                Revoke
              </button>
            </li>
          ))}
        </ul>
      </fieldset>
    </section>
  );
}
