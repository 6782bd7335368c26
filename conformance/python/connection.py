"""One WebSocket connection of a scenario, over Debian's python3-websockets (10.x, its asyncio client)."""

import asyncio
import json

import websockets

from copies import Copies
from protocol_schemas import SERVER_FRAME_TYPES


class WaitError(Exception):
    pass


class Connection:
    """Frames the server sends wait in an inbox until a step takes them; each taken frame updates the copies."""

    def __init__(self, socket):
        self.socket = socket
        self.copies = Copies()
        self.violations = []
        self.inbox = asyncio.Queue()
        self.reader = asyncio.ensure_future(self.read())

    @staticmethod
    async def open(url: str, protocols: list, headers: dict, timeout: float):
        socket = await websockets.connect(url, subprotocols=protocols, extra_headers=headers, max_size=None, open_timeout=timeout)
        if socket.subprotocol != "cpp-v1.0.0":
            await socket.close()
            raise WaitError(f'the server selected the subprotocol "{socket.subprotocol}", not cpp-v1.0.0')
        return Connection(socket)

    async def read(self):
        try:
            async for message in self.socket:
                if isinstance(message, bytes):
                    self.violations.append("the server sent a binary frame")
                    continue
                frame = json.loads(message)
                # §15: a client ignores server frames of types it does not know.
                if isinstance(frame, dict) and frame.get("type") in SERVER_FRAME_TYPES:
                    await self.inbox.put(frame)
        except websockets.ConnectionClosed:
            pass
        finally:
            await self.inbox.put(None)

    async def send(self, data):
        try:
            await self.socket.send(data)
        except websockets.ConnectionClosed:
            pass  # the server closed while the frame was on its way: a later step says whether it should have

    async def take(self, timeout: float):
        try:
            frame = await asyncio.wait_for(self.inbox.get(), timeout)
        except asyncio.TimeoutError:
            raise WaitError(f"no frame within {int(timeout * 1000)} ms") from None
        if frame is None:
            await self.inbox.put(None)
            raise WaitError(f"the server closed the connection ({self.socket.close_code})")
        return frame

    def observe(self, frame):
        self.violations.extend(self.copies.observe(frame))

    def drain(self) -> list:
        rest = []
        while not self.inbox.empty():
            frame = self.inbox.get_nowait()
            if frame is not None:
                self.observe(frame)
                rest.append(frame)
        return rest

    async def close(self):
        await self.socket.close()
        await self.reader
