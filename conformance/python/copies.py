"""What one connection holds of its threads, kept from the frames it takes, and the rules those frames break."""

import utf16


class Copies:
    def __init__(self):
        self.versions = {}
        self.texts = {}
        self.statuses = {}
        self.chunk_starts = {}
        self.ended = set()

    def streamed(self, node_id):
        """(text, chunk starts) of a node, as `$streamed` and `$lastChunk` need it."""
        if node_id not in self.texts:
            return None
        return self.texts[node_id], self.chunk_starts.get(node_id, [])

    def observe(self, frame) -> list:
        payload = frame["payload"]
        kind = frame["type"]
        if kind in ("CPP_SYNC_GRAPH", "CPP_GRAPH_PATCH"):
            return self.update(kind, payload)
        if kind == "CPP_STREAM_CHUNK":
            return self.chunk(payload)
        if kind == "CPP_STREAM_HALTED":
            return self.end(payload["interruptedNodeId"], payload["finalContentLength"], kind, lambda held, final: final <= held)
        if kind == "CPP_STREAM_COMPLETED":
            return self.end(payload["nodeId"], payload["finalContentLength"], kind, lambda held, final: final == held)
        if kind == "CPP_ERROR" and "nodeId" in payload:
            self.ended.add(payload["nodeId"])
        if kind == "CPP_THREAD_DELETED":
            # The thread is gone: one opened again under its id starts again at version 0.
            self.versions.pop(payload["threadId"], None)
        return []

    def update(self, kind, payload) -> list:
        thread, version = payload["threadId"], payload["version"]
        held = self.versions.get(thread)
        violations = []
        if kind == "CPP_GRAPH_PATCH" and held is not None and version != held + 1:
            violations.append(f"CPP_GRAPH_PATCH version {version} does not follow version {held}")
        if kind == "CPP_SYNC_GRAPH" and held is not None and version < held:
            violations.append(f"CPP_SYNC_GRAPH went back from version {held} to {version}")
        self.versions[thread] = version
        for node_id, node in payload["nodes"].items():
            if node["id"] != node_id:
                violations.append(f"node {node['id']} listed under {node_id}")
            self.texts[node_id] = node["content"]
            self.statuses[node_id] = node["status"]
        return violations

    def chunk(self, payload) -> list:
        node_id, offset, delta = payload["nodeId"], payload["offset"], payload["delta"]
        if node_id in self.ended:
            return [f"CPP_STREAM_CHUNK of node {node_id} after its end"]
        if node_id not in self.texts:
            return []
        if self.statuses.get(node_id) != "streaming":
            return [f"CPP_STREAM_CHUNK of node {node_id}, which is {self.statuses.get(node_id)}"]
        held = utf16.length(self.texts[node_id])
        if offset != held:
            return [f"CPP_STREAM_CHUNK offset {offset} of node {node_id}, whose text was {held} code units long"]
        self.texts[node_id] += delta
        self.chunk_starts.setdefault(node_id, []).append(offset)
        return []

    def end(self, node_id, final, kind, agrees) -> list:
        self.ended.add(node_id)
        if node_id not in self.texts:
            return []
        held = utf16.length(self.texts[node_id])
        if not agrees(held, final):
            return [f"{kind} finalContentLength {final} of node {node_id}, which was sent {held} code units"]
        self.texts[node_id] = utf16.prefix(self.texts[node_id], final)
        return []
