"""What the runner knows of the protocol's frames, read from the JSON Schemas that @promethea/cpp-protocol publishes
(one file per frame type), the same files the Node runner validates with: the one source, never a second list."""

import json
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent


def protocol_schemas(kit: Path = KIT) -> Path:
    """The package's schemas folder, found as Node finds the package: in node_modules from the kit's folder upwards
    (the kit installed, or the repository after `npm ci`); in the repository before `npm ci`, in packages/protocol."""
    for folder in (kit, *kit.parents):
        for package in (folder / "node_modules" / "@promethea" / "cpp-protocol", folder / "packages" / "protocol"):
            if (package / "schemas" / "server").is_dir():
                return package / "schemas"
    raise FileNotFoundError(f"no @promethea/cpp-protocol with its schemas in node_modules above {kit}")


def server_frame_types(schemas: Path) -> frozenset:
    return frozenset(path.stem for path in (schemas / "server").glob("*.json"))


# The chunk part that extends a tool call's input (docs/PROTOCOL.md §26.3), not a text of the node.
TOOL_INPUT_PART = "tool-input"


def text_parts(schemas: Path) -> tuple:
    """The parts a node's text streams in (content, reasoning), as CPP_STREAM_CHUNK's `part` lists them."""
    chunk = json.loads((schemas / "server" / "CPP_STREAM_CHUNK.json").read_text(encoding="utf-8"))
    return tuple(part for part in chunk["properties"]["payload"]["properties"]["part"]["enum"] if part != TOOL_INPUT_PART)


SCHEMAS = protocol_schemas()
SERVER_FRAME_TYPES = server_frame_types(SCHEMAS)
TEXT_PARTS = text_parts(SCHEMAS)
