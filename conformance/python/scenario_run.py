"""Runs one scenario file's steps against a server (the step kinds of conformance/README.md)."""

import asyncio
import http.client
import json
import secrets
import time
from urllib.parse import urlencode, urlsplit

from connection import Connection, WaitError
from json_values import preview
from matcher import Mismatch, ScenarioError, match
from upgrade import attempt_upgrade

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def ulid() -> str:
    """A ULID: 48 bits of milliseconds and 80 random bits, in Crockford's base 32."""
    value = (int(time.time() * 1000) << 80) | secrets.randbits(80)
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


GENERATORS = {
    "messageId": lambda: "msg_" + ulid(),
    "threadId": lambda: "thread_" + ulid(),
    "did": lambda: "did:key:zPython" + secrets.token_hex(12),
}


class StepFailure(Exception):
    pass


def fill(template, bindings):
    """The value to send: {"$ref": name} is the variable, {"$repeat": text, "count": n} the text n times."""
    if isinstance(template, list):
        return [fill(item, bindings) for item in template]
    if not isinstance(template, dict):
        return template
    if "$ref" in template:
        if template["$ref"] not in bindings:
            raise ScenarioError(f'variable "{template["$ref"]}" is not bound yet')
        return bindings[template["$ref"]]
    if "$repeat" in template:
        return template["$repeat"] * template["count"]
    return {key: fill(value, bindings) for key, value in template.items()}


def describe(frame) -> str:
    return f"CPP_ERROR {frame['payload'].get('code')}" if frame["type"] == "CPP_ERROR" else frame["type"]


class ScenarioRun:
    def __init__(self, scenario, url: str, timeout: float):
        self.scenario = scenario
        self.timeout = timeout
        parts = urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.session_path = parts.path if parts.path not in ("", "/") else "/v1/cpp/session"
        self.bindings = {name: GENERATORS[kind]() for name, kind in scenario.get("generate", {}).items()}
        self.connections = {}

    async def execute(self):
        """None when the server passed, else (step number, reason)."""
        number = 0
        try:
            for number, step in enumerate(self.scenario["steps"], start=1):
                await self.perform(step)
                self.check_violations()
            number += 1
            self.finish()
            return None
        except (StepFailure, WaitError, Mismatch) as failure:
            return number, str(failure)
        except ScenarioError as error:
            return number, f"scenario error: {error}"
        finally:
            for connection in self.connections.values():
                await connection.close()

    async def perform(self, step):
        on = step.get("on", "client")
        if "connect" in step:
            url, protocols, headers = self.handshake(step["connect"])
            self.connections[on] = await Connection.open(url, protocols, headers, self.timeout)
        elif "refuse" in step:
            await self.refuse(step["refuse"])
        elif "http" in step:
            await asyncio.to_thread(self.http, step["http"])
        elif "send" in step:
            frame = fill(step["send"], self.bindings)
            frame.setdefault("timestamp", int(time.time() * 1000))
            await self.connection(on).send(json.dumps(frame))
        elif "sendText" in step:
            await self.connection(on).send(fill(step["sendText"], self.bindings))
        elif "sendBinary" in step:
            await self.connection(on).send(step["sendBinary"].encode("utf-8"))
        elif "expect" in step:
            await self.expect(on, step["expect"], skip_chunks=True)
        elif "expectNext" in step:
            await self.expect(on, step["expectNext"], skip_chunks=False)
        elif "expectAll" in step:
            await self.expect_all(on, step["expectAll"])
        elif "waitStreamed" in step:
            await self.wait_streamed(on, step["waitStreamed"])
        elif "expectClose" in step:
            await self.expect_close(on, step["expectClose"]["code"])
        elif "close" in step:
            await self.connections.pop(on).close()
        else:
            raise ScenarioError(f"this runner does not run the step {preview(step)}")

    def handshake(self, options):
        values = lambda name: {key: str(fill(value, self.bindings)) for key, value in options.get(name, {}).items()}
        query = values("query")
        url = self.origin + options.get("path", self.session_path) + ("?" + urlencode(query) if query else "")
        return url, options.get("protocols", ["cpp-v1.0.0"]), values("headers")

    async def refuse(self, options):
        url, protocols, headers = self.handshake(options)
        status, body = attempt_upgrade(url.replace("ws", "http", 1), protocols, headers, self.timeout)
        if status == 101:
            raise StepFailure(f"the server accepted an upgrade it must refuse with HTTP {options['status']}")
        if status != options["status"]:
            raise StepFailure(f"expected HTTP {options['status']}, got {status} ({preview(body)})")
        if "body" in options:
            self.bindings = match(options["body"], body, self.bindings, lambda _: None)

    def http(self, options):
        """One HTTP request beside the session, on its origin; its status must be `status`, its JSON body match `json`."""
        parts = options["path"] if isinstance(options["path"], list) else [options["path"]]
        path = "".join(str(fill(part, self.bindings)) for part in parts)
        url, _, headers = self.handshake({"path": path, "query": options.get("query", {}), "headers": options.get("headers", {})})
        target = urlsplit(url)
        connection_class = http.client.HTTPSConnection if target.scheme == "wss" else http.client.HTTPConnection
        connection = connection_class(target.hostname, target.port, timeout=self.timeout)
        method = options.get("method", "GET")
        try:
            body = options["body"].encode("utf-8") if "body" in options else None
            connection.request(method, target.path + ("?" + target.query if target.query else ""), body=body, headers=headers)
            response = connection.getresponse()
            text = response.read().decode("utf-8", errors="replace")
        finally:
            connection.close()
        if response.status != options["status"]:
            raise StepFailure(f"{method} {path}: expected HTTP {options['status']}, got {response.status} ({preview(text)})")
        if "json" not in options:
            return
        try:
            value = json.loads(text)
        except ValueError:
            raise StepFailure(f"{method} {path}: the answer is not JSON ({preview(text)})") from None
        try:
            self.bindings = match(options["json"], value, self.bindings, lambda _: None)
        except Mismatch as mismatch:
            raise StepFailure(f"{method} {path}: {mismatch}") from None

    async def expect(self, on, pattern, skip_chunks):
        connection = self.connection(on)
        wants_chunk = isinstance(pattern, dict) and pattern.get("type") == "CPP_STREAM_CHUNK"
        frame = await self.next_frame(connection, skip_chunks and not wants_chunk)
        try:
            self.bindings = match(pattern, frame, self.bindings, connection.copies.streamed)
        except Mismatch as mismatch:
            raise StepFailure(f"{describe(frame)}: {mismatch}") from None
        finally:
            connection.observe(frame)

    async def expect_all(self, on, patterns):
        """The next frames (chunks aside) match the patterns in any order: each frame takes the first one it matches."""
        connection = self.connection(on)
        remaining = list(patterns)
        while remaining:
            frame = await self.next_frame(connection, skip_chunks=True)
            for index, pattern in enumerate(remaining):
                try:
                    self.bindings = match(pattern, frame, self.bindings, connection.copies.streamed)
                except Mismatch:
                    continue
                del remaining[index]
                break
            else:
                connection.observe(frame)
                raise StepFailure(f"{describe(frame)} matches none of the patterns still expected: {preview(frame.get('payload'), 300)}")
            connection.observe(frame)

    async def next_frame(self, connection, skip_chunks):
        """The next frame; with skip_chunks, what streams before it (CPP_STREAM_CHUNKs, and a running tool's progress
        reports: CPP_TOOL_CALLs with `progress`) is applied to the copies on the way."""
        while True:
            frame = await connection.take(self.timeout)
            streams = frame["type"] == "CPP_STREAM_CHUNK" or (
                frame["type"] == "CPP_TOOL_CALL" and "progress" in frame["payload"]["toolCall"]
            )
            if skip_chunks and streams:
                connection.observe(frame)
                continue
            return frame

    async def wait_streamed(self, on, options):
        connection = self.connection(on)
        node_id = fill({"$ref": options["node"]}, self.bindings)
        while True:
            streamed = connection.copies.streamed(node_id, options.get("part", "content"))
            held = len(streamed[0].encode("utf-16-le")) // 2 if streamed else 0
            if held >= options["atLeast"]:
                return
            frame = await connection.take(self.timeout)
            connection.observe(frame)
            if frame["type"] != "CPP_STREAM_CHUNK":
                raise StepFailure(f"expected node {options['node']} to stream at least {options['atLeast']} code units, but {describe(frame)} came after {held}")

    async def expect_close(self, on, code):
        connection = self.connections.pop(on)
        try:
            await asyncio.wait_for(asyncio.shield(connection.reader), self.timeout)
        except asyncio.TimeoutError:
            raise StepFailure(f"the connection was not closed within {self.timeout} s") from None
        finally:
            await connection.close()
        if connection.socket.close_code != code:
            raise StepFailure(f"expected the server to close with {code}, it closed with {connection.socket.close_code}")

    def check_violations(self):
        for name, connection in self.connections.items():
            if connection.violations:
                raise StepFailure(f'on connection "{name}": {connection.violations[0]}')

    def finish(self):
        for name, connection in self.connections.items():
            errors = [frame for frame in connection.drain() if frame["type"] == "CPP_ERROR"]
            if errors:
                raise StepFailure(f'on connection "{name}": an unexpected {describe(errors[0])}')
        self.check_violations()

    def connection(self, name):
        if name not in self.connections:
            raise ScenarioError(f'no open connection "{name}"')
        return self.connections[name]
