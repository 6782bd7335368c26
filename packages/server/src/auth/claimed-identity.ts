import type { IncomingMessage } from 'node:http';
import { CPP_DID_HEADER, CPP_DID_QUERY_PARAMETER } from '@promethea/cpp-protocol';
import { UpgradeRefusal } from './upgrade-refusal.js';
import { ANONYMOUS_DID, isDid, type Identity } from '../engine/identity.js';

/**
 * The claimed identity of a connection: the `X-Client-Sovereign-DID` header, else (browsers cannot set headers)
 * the `did` query parameter, else anonymous. A claim, not a proof: see auth/ for what a server makes of it.
 */
export function claimedIdentity(request: IncomingMessage): Identity | UpgradeRefusal {
  const header = request.headers[CPP_DID_HEADER.toLowerCase()];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  const fromQuery =
    new URL(request.url ?? '/', 'http://localhost').searchParams.get(CPP_DID_QUERY_PARAMETER) ?? undefined;
  const did = (fromHeader ?? fromQuery)?.trim();
  if (did === undefined || did === '') return { did: ANONYMOUS_DID, verified: false };
  if (!isDid(did))
    return new UpgradeRefusal(400, `${CPP_DID_HEADER} must be a DID (did:<method>:<id>, at most 256 characters)`);
  return { did, verified: false };
}
