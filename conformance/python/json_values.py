"""JSON values as Python holds them: json.loads gives dict, list, str, int, float, bool and None."""

import json

ABSENT = object()
"""Stands for a field a frame does not have."""


def json_equal(left, right) -> bool:
    """Structural equality that, unlike ==, keeps true apart from 1 and false apart from 0."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(json_equal(a, b) for a, b in zip(left, right))
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(json_equal(value, right[key]) for key, value in left.items())
    if isinstance(left, (list, dict)) or isinstance(right, (list, dict)):
        return False
    return left == right


def preview(value, limit: int = 160) -> str:
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
