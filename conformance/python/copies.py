"""What one connection holds of its threads, kept from the frames it takes, and the rules those frames break."""

import utf16
from protocol_schemas import TEXT_PARTS, TOOL_INPUT_PART


class Copies:
    def __init__(self):
        self.versions = {}
        # (node id, part) -> the text of the node's content or reasoning (docs/PROTOCOL.md §11.5).
        self.texts = {}
        self.statuses = {}
        # (node id, part) -> where each chunk began since the node last began streaming.
        self.chunk_starts = {}
        self.ended = set()

    def streamed(self, node_id, part="content"):
        """(text, chunk starts) of a node's part, as `$streamed` and `$lastChunk` need it."""
        if (node_id, part) not in self.texts:
            return None
        return self.texts[(node_id, part)], self.chunk_starts.get((node_id, part), [])

    def observe(self, frame) -> list:
        payload = frame["payload"]
        kind = frame["type"]
        if kind in ("CPP_SYNC_GRAPH", "CPP_GRAPH_PATCH"):
            return self.update(kind, payload)
        if kind == "CPP_STREAM_CHUNK":
            return self.chunk(payload)
        if kind == "CPP_TOOL_CALL":
            return self.tool_call(payload)
        if kind == "CPP_STREAM_HALTED":
            node_id = payload["interruptedNodeId"]
            self.ended.add(node_id)
            content = self.cut(node_id, "content", payload["finalContentLength"], kind, lambda held, final: final <= held)
            return content + self.cut(node_id, "reasoning", payload.get("finalReasoningLength", 0), kind, lambda held, final: final <= held)
        if kind == "CPP_STREAM_COMPLETED":
            self.ended.add(payload["nodeId"])
            return self.cut(payload["nodeId"], "content", payload["finalContentLength"], kind, lambda held, final: final == held)
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
            if node["status"] == "streaming" and self.statuses.get(node_id) != "streaming":
                # Streaming again (CPP_CONTINUE, §24.4): not ended any more, its chunks counted afresh.
                self.ended.discard(node_id)
                for part in TEXT_PARTS:
                    self.chunk_starts.pop((node_id, part), None)
            self.texts[(node_id, "content")] = node["content"]
            self.texts[(node_id, "reasoning")] = node.get("reasoning", "")
            for call in node.get("toolCalls", []):
                self.texts[(node_id, (TOOL_INPUT_PART, call["toolCallId"]))] = call["input"]
            self.statuses[node_id] = node["status"]
        return violations

    def tool_call(self, payload) -> list:
        """A tool call of a streaming node (§26.3): its input, which its tool-input chunks then extend."""
        node_id, call = payload["nodeId"], payload["toolCall"]
        if node_id in self.ended:
            return [f"CPP_TOOL_CALL of node {node_id} after its end"]
        self.texts[(node_id, (TOOL_INPUT_PART, call["toolCallId"]))] = call["input"]
        return []

    def chunk(self, payload) -> list:
        node_id, offset, delta = payload["nodeId"], payload["offset"], payload["delta"]
        part = payload.get("part", "content")
        if part == TOOL_INPUT_PART:
            part = (TOOL_INPUT_PART, payload.get("toolCallId"))
            if (node_id, "content") in self.texts and (node_id, part) not in self.texts and node_id not in self.ended:
                return [f"tool-input CPP_STREAM_CHUNK of call {part[1]}, before the CPP_TOOL_CALL announcing it"]
        if node_id in self.ended:
            return [f"CPP_STREAM_CHUNK of node {node_id} after its end"]
        if (node_id, part) not in self.texts:
            return []
        if self.statuses.get(node_id) != "streaming":
            return [f"CPP_STREAM_CHUNK of node {node_id}, which is {self.statuses.get(node_id)}"]
        held = utf16.length(self.texts[(node_id, part)])
        if offset != held:
            return [f"CPP_STREAM_CHUNK offset {offset} of node {node_id}, whose {part} was {held} code units long"]
        self.texts[(node_id, part)] += delta
        self.chunk_starts.setdefault((node_id, part), []).append(offset)
        return []

    def cut(self, node_id, part, final, kind, agrees) -> list:
        if (node_id, part) not in self.texts:
            return []
        held = utf16.length(self.texts[(node_id, part)])
        if not agrees(held, final):
            field = "finalContentLength" if part == "content" else "finalReasoningLength"
            return [f"{kind} {field} {final} of node {node_id}, which was sent {held} code units"]
        self.texts[(node_id, part)] = utf16.prefix(self.texts[(node_id, part)], final)
        return []
