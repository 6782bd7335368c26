import type { CPPClient } from '@promethea/cpp-client';
import type { MemberRole, ShareScope, ThreadMember } from '@promethea/cpp-protocol';
import { useShareLinks } from '@promethea/cpp-react';
import { useEffect, useState, type FormEvent } from 'react';

interface SharePanelProps {
  client: CPPClient;
  threadId: string;
  report(error: unknown): void;
  onClose(): void;
}

/**
 * The owner shares the thread (docs/PROTOCOL.md §29): an invite link for someone whose DID it does not know, a
 * member added by DID, the members listed with a way to remove each. A link's token is shown this once.
 */
export function SharePanel({ client, threadId, report, onClose }: SharePanelProps) {
  const [members, setMembers] = useState<ThreadMember[]>();
  const [role, setRole] = useState<MemberRole>('writer');
  const [did, setDid] = useState('');
  const [link, setLink] = useState<string>();
  const [scope, setScope] = useState<ShareScope>('branch');
  const [readLink, setReadLink] = useState<string>();
  const shareLinks = useShareLinks(client, threadId);

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

  return (
    <section className="share-panel" aria-label="Share this conversation">
      <label>
        Role{' '}
        <select value={role} onChange={(event) => setRole(event.target.value as MemberRole)}>
          <option value="writer">can write</option>
          <option value="reader">can only read</option>
        </select>
      </label>
      <button type="button" onClick={invite}>
        Create an invite link
      </button>
      {link && (
        <input
          readOnly
          aria-label="Invite link, for one person: it works once"
          value={link}
          onFocus={(event) => event.target.select()}
        />
      )}
      <form onSubmit={add}>
        <input
          aria-label="DID to share with"
          placeholder="did:key:…"
          value={did}
          onChange={(e) => setDid(e.target.value)}
        />
        <button type="submit" disabled={!did.trim().startsWith('did:')}>
          Add
        </button>
      </form>
      <ul aria-label="Members">
        {members?.map((member) => (
          <li key={member.did}>
            {member.role === 'writer' ? 'Writer' : 'Reader'} <code>{member.did}</code>{' '}
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
      <fieldset className="share-links">
        <legend>Read-only link: anyone who has it can read, without signing in</legend>
        <label>
          Shows{' '}
          <select value={scope} onChange={(event) => setScope(event.target.value as ShareScope)}>
            <option value="branch">this branch</option>
            <option value="tree">every branch</option>
          </select>
        </label>
        <button type="button" onClick={makeReadLink}>
          Create a read-only link
        </button>
        {readLink && (
          <input
            readOnly
            aria-label="Read-only link, as the conversation is now"
            value={readLink}
            onFocus={(event) => event.target.select()}
          />
        )}
        <ul aria-label="Read-only links">
          {shareLinks.value?.map((shared) => (
            <li key={shared.linkId}>
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
      <button type="button" className="quiet" onClick={onClose}>
        Close
      </button>
    </section>
  );
}
