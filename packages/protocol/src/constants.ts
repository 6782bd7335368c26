/** The WebSocket subprotocol a CPP v1.0.0 client must offer and a server must select. */
export const CPP_SUBPROTOCOL = 'cpp-v1.0.0';

/** The path of the session endpoint. */
export const CPP_SESSION_PATH = '/v1/cpp/session';

/** The HTTP header carrying the client's claimed decentralised identifier. */
export const CPP_DID_HEADER = 'X-Client-Sovereign-DID';

/** Browsers cannot set headers on a WebSocket, so the claim may also travel as this query parameter. */
export const CPP_DID_QUERY_PARAMETER = 'did';

/** Default largest accepted text frame, in bytes. */
export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024;
