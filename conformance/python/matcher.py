"""Matches server frames against the patterns of the scenario files (conformance/README.md, "Patterns")."""

import re

import utf16
from protocol_schemas import TEXT_PARTS
from json_values import ABSENT, json_equal, preview


class ScenarioError(Exception):
    """A mistake in a scenario file, as opposed to a server that does not conform."""


class Mismatch(Exception):
    pass


class Matcher:
    """One match attempt: `bindings` are the scenario's variables, `streamed(node_id, part)` a node's (text, chunk starts)."""

    def __init__(self, bindings: dict, streamed):
        self.bindings = dict(bindings)
        self.streamed = streamed

    def match(self, pattern, actual, path: str = "") -> None:
        if isinstance(pattern, list):
            return self.match_list(pattern, actual, path)
        if not isinstance(pattern, dict):
            if not json_equal(pattern, actual):
                fail(path, preview(pattern), actual)
            return None
        operators = [key for key in pattern if key.startswith("$")]
        if operators:
            parameters = {key: value for key, value in pattern.items() if not key.startswith("$")}
            for name in operators:
                operator = getattr(self, "op_" + name[1:], None)
                if operator is None:
                    raise ScenarioError(f"unknown operator {name} at {path or '(frame)'}")
                operator(pattern[name], actual, path, parameters)
            return None
        if not isinstance(actual, dict):
            fail(path, "an object", actual)
        for key, value in pattern.items():
            self.match(value, actual.get(key, ABSENT), join(path, key))
        return None

    def match_list(self, pattern: list, actual, path: str) -> None:
        if not isinstance(actual, list):
            fail(path, "an array", actual)
        if len(actual) != len(pattern):
            fail(path, f"an array of {len(pattern)}", actual)
        for index, item in enumerate(pattern):
            self.match(item, actual[index], f"{path}[{index}]")

    def attempt(self, pattern, actual, path: str):
        """Matches on a copy of the bindings; returns the copy, or None when it does not match."""
        trial = Matcher(self.bindings, self.streamed)
        try:
            trial.match(pattern, actual, path)
        except Mismatch:
            return None
        return trial.bindings

    def variable(self, name: str):
        if name not in self.bindings:
            raise ScenarioError(f'variable "{name}" is not bound yet')
        return self.bindings[name]

    def op_any(self, kind, actual, path, _):
        kinds = {
            True: lambda value: value is not ABSENT,
            "integer": lambda value: (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer()),
            "number": lambda value: isinstance(value, (int, float)) and not isinstance(value, bool),
            "string": lambda value: isinstance(value, str),
            "boolean": lambda value: isinstance(value, bool),
            "object": lambda value: isinstance(value, dict),
            "array": lambda value: isinstance(value, list),
            "null": lambda value: value is None,
        }
        if not kinds[kind](actual):
            fail(path, f"any {kind}", actual)

    def op_match(self, regex, actual, path, _):
        if not isinstance(actual, str) or re.search(regex, actual) is None:
            fail(path, f"a string matching /{regex}/", actual)

    def op_capture(self, name, actual, path, _):
        if actual is ABSENT:
            fail(path, f"a value to capture as {name}", actual)
        if name in self.bindings and not json_equal(self.bindings[name], actual):
            fail(path, f"{preview(self.bindings[name])} (already captured as {name})", actual)
        self.bindings[name] = actual

    def op_ref(self, name, actual, path, _):
        value = self.variable(name)
        if not json_equal(value, actual):
            fail(path, f"{preview(value)} ({name})", actual)

    def op_absent(self, _, actual, path, __):
        if actual is not ABSENT:
            fail(path, "no such field", actual)

    def op_not(self, pattern, actual, path, _):
        if self.attempt(pattern, actual, path) is not None:
            fail(path, f"anything but {preview(pattern)}", actual)

    def op_in(self, values, actual, path, _):
        if not any(json_equal(value, actual) for value in values):
            fail(path, f"one of {preview(values)}", actual)

    def op_gte(self, bound, actual, path, _):
        if not isinstance(actual, (int, float)) or isinstance(actual, bool) or actual < bound:
            fail(path, f"a number ≥ {bound}", actual)

    def op_lte(self, bound, actual, path, _):
        if not isinstance(actual, (int, float)) or isinstance(actual, bool) or actual > bound:
            fail(path, f"a number ≤ {bound}", actual)

    def op_length(self, pattern, actual, path, _):
        if isinstance(actual, str):
            return self.match(pattern, utf16.length(actual), path + ".length")
        if isinstance(actual, list):
            return self.match(pattern, len(actual), path + ".length")
        fail(path, "a string or an array", actual)

    def op_contains(self, pattern, actual, path, _):
        if not isinstance(actual, list):
            fail(path, "an array", actual)
        for item in actual:
            bindings = self.attempt(pattern, item, path)
            if bindings is not None:
                self.bindings = bindings
                return
        fail(path, f"an array containing {preview(pattern)}", actual)

    def op_values(self, patterns, actual, path, _):
        if isinstance(actual, dict):
            entries = [(join(path, key), value) for key, value in actual.items()]
        elif isinstance(actual, list):
            entries = [(f"{path}[{index}]", value) for index, value in enumerate(actual)]
        else:
            fail(path, "an object or an array", actual)
        if len(entries) != len(patterns):
            fail(path, f"{len(patterns)} entries", actual)

        def assign(index, used, bindings):
            if index == len(patterns):
                return bindings
            for position, (entry_path, value) in enumerate(entries):
                if position in used:
                    continue
                trial = Matcher(bindings, self.streamed).attempt(patterns[index], value, entry_path)
                if trial is not None:
                    result = assign(index + 1, used | {position}, trial)
                    if result is not None:
                        return result
            return None

        result = assign(0, frozenset(), self.bindings)
        if result is None:
            fail(path, f"entries matching {preview(patterns)}", actual)
        self.bindings = result

    def op_streamed(self, name, actual, path, parameters):
        text, _ = self.streamed_text(name, parameters)
        value = utf16.prefix(text, self.cut(parameters, text))
        if value != actual:
            fail(path, f"the streamed text {preview(value)}", actual)

    def op_streamedLength(self, name, actual, path, parameters):
        text, _ = self.streamed_text(name, parameters)
        if not json_equal(utf16.length(text), actual):
            fail(path, f"the streamed length {utf16.length(text)}", actual)

    def op_lastChunk(self, name, actual, path, parameters):
        text, starts = self.streamed_text(name, parameters)
        cut = self.cut(parameters, text)
        start = max([offset for offset in starts if offset < cut], default=cut)
        value = utf16.between(text, start, cut)
        if value != actual:
            fail(path, f"the part of the last chunk before the cut, {preview(value)}", actual)

    def streamed_text(self, name, parameters):
        """The streamed text of the node `name`, of the part the `part` parameter names (default: its content)."""
        node_id = self.variable(name)
        part = parameters.get("part", "content")
        if part not in TEXT_PARTS:
            raise ScenarioError(f"part is one of {', '.join(TEXT_PARTS)}, not {part!r}")
        streamed = self.streamed(node_id, part)
        if streamed is None:
            raise ScenarioError(f"this connection holds no text of node {node_id} ({name})")
        return streamed

    def cut(self, parameters, text) -> int:
        cut = parameters.get("cut")
        if cut is None:
            return utf16.length(text)
        return self.variable(cut["$ref"]) if isinstance(cut, dict) else cut


def match(pattern, actual, bindings: dict, streamed):
    """The bindings after a successful match; raises Mismatch with the reason otherwise."""
    matcher = Matcher(bindings, streamed)
    matcher.match(pattern, actual)
    return matcher.bindings


def join(path: str, key: str) -> str:
    return key if path == "" else f"{path}.{key}"


def fail(path: str, what: str, actual):
    raise Mismatch(f"{path or '(frame)'}: expected {what}, got {preview(actual)}")
