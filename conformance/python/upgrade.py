"""An upgrade request the server is expected to refuse, sent by hand to read the HTTP status and body."""

import base64
import http.client
import os
from urllib.parse import urlsplit


def attempt_upgrade(url: str, protocols: list, headers: dict, timeout: float):
    """(status, body) of the server's answer; status 101 means it accepted the upgrade."""
    parts = urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "wss" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=timeout)
    request_headers = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
        **headers,
    }
    if protocols:
        request_headers["Sec-WebSocket-Protocol"] = ", ".join(protocols)
    try:
        target = parts.path + ("?" + parts.query if parts.query else "")
        connection.request("GET", target, headers=request_headers)
        response = connection.getresponse()
        body = b"" if response.status == 101 else response.read()
        return response.status, body.decode("utf-8", errors="replace")
    finally:
        connection.close()
