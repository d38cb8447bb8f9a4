"""Seeded mutations of real inputs for the fuzz tests (tests/test_fuzz_*.py).

Each mutation is a function of a ``random.Random`` and the seed's bytes; the same seed number
gives the same case, so a failure names the case that reproduces it. The kinds are those that
took readers down before: truncation, random bytes, huge numbers, deep nesting, NUL, CRLF,
mixed encodings, lone surrogates, long runs of one character and values of the wrong type.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?")
HUGE = [b"1e999", b"-1e999", b"9" * 5000, b"18446744073709551616", b"NaN", b"Infinity", b"1" * 30, b"-0", b"0x10", b"inf", b"nan"]
ODD = [None, True, 0, -1, 2**70, 1.5, "", "oops", "\ud800", "\x1b[2J\r", [], [1, [2]], {}, {"unavailable": 3}, {"a": {"b": []}}]
RUN_CHARS = "a9 .-|'\"=:/+\t\\{[<`#*@_"


def _truncate(r: random.Random, b: bytes) -> bytes:
    return b[: r.randrange(len(b) + 1)]


def _random_bytes(r: random.Random, b: bytes) -> bytes:
    at = r.randrange(len(b) + 1)
    return b[:at] + r.randbytes(r.randrange(1, 64)) + b[at + r.randrange(0, 8) :]


def _flip(r: random.Random, b: bytes) -> bytes:
    if not b:
        return b
    out = bytearray(b)
    for _ in range(r.randrange(1, 16)):
        out[r.randrange(len(out))] = r.randrange(256)
    return bytes(out)


def _huge_number(r: random.Random, b: bytes) -> bytes:
    spots = list(NUMBER.finditer(b[:200_000]))
    if not spots:
        return b + r.choice(HUGE)
    m = r.choice(spots)
    return b[: m.start()] + r.choice(HUGE) + b[m.end() :]


def _deep(r: random.Random, b: bytes) -> bytes:
    n = r.choice([65, 200, 1000, 5000, 100_000])
    opener, closer = r.choice([(b"[", b"]"), (b'{"a":', b"}"), (b"a = [", b"]"), (b"x = {a = ", b"}")])
    at = r.randrange(len(b) + 1)
    return b[:at] + opener * n + (closer * n if r.random() < 0.5 else b"") + b[at:]


def _nul(r: random.Random, b: bytes) -> bytes:
    at = r.randrange(len(b) + 1)
    return b[:at] + b"\x00" * r.randrange(1, 4) + b[at:]


def _crlf(r: random.Random, b: bytes) -> bytes:
    return b.replace(b"\n", r.choice([b"\r\n", b"\r", b"\n\r", b"\x85"]))


def _encoding(r: random.Random, b: bytes) -> bytes:
    text = b.decode("utf-8", "replace")
    cut = r.randrange(len(text) + 1)
    enc = r.choice(["latin-1", "utf-16", "utf-16-le", "cp1252", "utf-8-sig", "utf-32"])
    return text[:cut].encode("utf-8") + text[cut:].encode(enc, "replace")


def _surrogate(r: random.Random, b: bytes) -> bytes:
    spots = [m.start() + 1 for m in re.finditer(rb'"', b[:200_000])]
    at = r.choice(spots) if spots else r.randrange(len(b) + 1)
    return b[:at] + r.choice([b"\\ud800", b"\\udfff", b"\\ud83d", b"\\ud800\\ud800", b"\xed\xa0\x80"]) + b[at:]


def _run(r: random.Random, b: bytes) -> bytes:
    at = r.randrange(len(b) + 1)
    return b[:at] + r.choice(RUN_CHARS).encode() * r.choice([100, 5000, 70_000]) + b[at:]


def _duplicate(r: random.Random, b: bytes) -> bytes:
    if not b:
        return b
    i = r.randrange(len(b))
    j = min(len(b), i + r.randrange(1, 4096))
    return b[:j] + b[i:j] * r.randrange(1, 20) + b[j:]


def _retype(r: random.Random, b: bytes) -> bytes:
    """A JSON document with one value (or key) replaced by one of another type."""
    try:
        doc = json.loads(b)
        for _ in range(r.randrange(1, 4)):
            doc = _retype_one(r, doc)
        return json.dumps(doc, ensure_ascii=r.random() < 0.5).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):  # not JSON, or nested too deep for json itself
        return _flip(r, b)


def _retype_one(r: random.Random, doc):
    path, node = [], doc
    while isinstance(node, (dict, list)) and node and r.random() < 0.8:
        key = r.choice(list(node)) if isinstance(node, dict) else r.randrange(len(node))
        path.append((node, key))
        node = node[key]
    if not path:
        return r.choice(ODD)
    parent, key = path[-1]
    if isinstance(parent, dict) and r.random() < 0.2:
        parent[r.choice(["\ud800", "", "version", "name", "unavailable"])] = parent.pop(key)
    elif isinstance(parent, dict) and r.random() < 0.1:
        del parent[key]
    else:
        parent[key] = r.choice(ODD)
    return doc


MUTATIONS: tuple[Callable[[random.Random, bytes], bytes], ...] = (
    _truncate,
    _random_bytes,
    _flip,
    _huge_number,
    _deep,
    _nul,
    _crlf,
    _encoding,
    _surrogate,
    _run,
    _duplicate,
    _retype,
    _retype,
    _retype,
)


def cases(seeds: list[bytes], n: int, salt: int = 0) -> Iterator[tuple[int, bytes]]:
    """``n`` mutated inputs: (case number, bytes); case k always mutates the same way."""
    for k in range(n):
        r = random.Random(k * 7919 + salt)
        data = r.choice(seeds)
        for _ in range(r.choice([1, 1, 1, 2, 3])):
            data = r.choice(MUTATIONS)(r, data)
        yield k, data


def seed_files(*patterns: str) -> list[bytes]:
    out = []
    for pattern in patterns:
        out += [p.read_bytes() for p in sorted(FIXTURES.glob(pattern))]
    assert out, patterns
    return out
