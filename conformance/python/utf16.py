"""CPP counts text in UTF-16 code units (docs/PROTOCOL.md §3.3); Python strings count code points."""


def length(text: str) -> int:
    """The length of text in UTF-16 code units: a code point above U+FFFF counts 2."""
    return len(text.encode("utf-16-le")) // 2


def prefix(text: str, units: int) -> str:
    """The first `units` UTF-16 code units of text (a cut inside a surrogate pair keeps the lone high half)."""
    return text.encode("utf-16-le")[: units * 2].decode("utf-16-le", errors="surrogatepass")


def between(text: str, start: int, end: int) -> str:
    """The UTF-16 code units [start, end) of text."""
    return text.encode("utf-16-le")[start * 2 : end * 2].decode("utf-16-le", errors="surrogatepass")
