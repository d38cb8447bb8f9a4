"""Reports read by `diff` and `fleet` are shape-checked: any JSON is a verdict or one line and exit 2, never 3."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from envdoctor.commands.diff import compare, render
from envdoctor.commands.fleet import summarize
from envdoctor.core.report import ReportError, load_report

FIXTURES = Path(__file__).parent / "fixtures" / "reports"
GOOD = FIXTURES / "v1.0-gpu-h200.json"
EXIT_USAGE = 2

BASE = '{"schema_version": "1.0", "results": []'
MALFORMED = {
    "platform-string": BASE + ', "platform": "Linux"}',
    "facts-list": BASE + ', "facts": ["dists"]}',
    "tool-string": BASE + ', "tool": "envdoctor 0.1.0"}',
    "results-non-dict": '{"schema_version": "1.0", "results": ["pass", 3]}',
    "result-id-number": '{"schema_version": "1.0", "results": [{"id": 7, "status": "pass"}]}',
    "result-status-list": '{"schema_version": "1.0", "results": [{"id": "a.b", "status": ["pass"]}]}',
    "result-details-list": '{"schema_version": "1.0", "results": [{"id": "a.b", "status": "pass", "details": []}]}',
    "schema-version-object": '{"schema_version": {"major": 1}, "results": []}',
    "deep-nesting": "[" * 100000 + "]" * 100000,
    "deep-in-facts": BASE + ', "facts": {"x": ' + "[" * 200 + "]" * 200 + "}}",
    "huge-integer": BASE + ', "facts": {"n": ' + "9" * 5000 + "}}",
    "huge-float": BASE + ', "facts": {"gpus": [{"index": 0, "name": "x", "memory_total": 1e999}]}}',
    "big-integer": BASE + ', "facts": {"gpus": [{"index": 0, "name": "x", "memory_total": ' + "9" * 400 + "}]}}",
    "nan": BASE + ', "facts": {"matmul_perf": {"devices": [{"index": 0, "matmul": {"bf16": {"tflops": NaN}}}]}}}',
    "infinity": BASE + ', "duration_s": Infinity}',
}


@pytest.mark.parametrize("which", sorted(MALFORMED))
def test_malformed_report_is_one_line_and_exit_2(cli_inproc, which, tmp_path):
    bad = tmp_path / f"{which}.json"
    bad.write_text(MALFORMED[which])
    for args in ((str(bad), str(GOOD)), (str(GOOD), str(bad))):
        done = cli_inproc("diff", *args)
        assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
        assert done.stdout == "" and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
        assert "is not an envdoctor report" in done.stderr
    fleet = summarize([str(bad), str(GOOD)])
    assert [Path(u.source).name for u in fleet.unreadable] == [bad.name]
    assert len(fleet.nodes) == 1


def _junk(rng: random.Random, depth: int = 0):
    makers = [
        lambda: None,
        lambda: True,
        lambda: rng.randint(-(2**63), 2**63),
        lambda: rng.uniform(-1e300, 1e300),
        lambda: "".join(rng.choice("ab.-/\x00é<>") for _ in range(rng.randrange(6))),
        lambda: "pass",
        lambda: {"unavailable": "gone"},
        lambda: [_junk(rng, depth + 1) for _ in range(rng.randrange(3))],
        lambda: {rng.choice(("name", "version", "index", "id", "status", "devices", "x")): _junk(rng, depth + 1) for _ in range(3)},
    ]
    return rng.choice(makers if depth < 4 else makers[:7])()


def _paths(node, prefix=()):
    yield prefix
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for k, v in items:
        yield from _paths(v, (*prefix, k))


def _mutate(report: dict, rng: random.Random) -> dict:
    """A copy of a real report with a few subtrees swapped for junk of any JSON type."""
    r = copy.deepcopy(report)
    paths = [p for p in _paths(r) if p]
    for path in rng.sample(paths, k=min(3, len(paths))):
        node = r
        try:
            for k in path[:-1]:
                node = node[k]
            node[path[-1]] = _junk(rng)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier swap replaced a parent
    return r


@pytest.mark.parametrize("seed", range(40))
def test_generated_junk_is_a_comparison_or_a_report_error(seed, tmp_path):
    """Hypothesis-style: real reports with random subtrees swapped for junk. Loading either
    refuses with a ReportError or yields something diff and fleet compare and render."""
    rng = random.Random(seed)
    names = ["v1.0-gpu-h200.json", "v1.0-cpu-box.json", "v1.0-gpu-h200-triton-mismatch.json", "v1.4-future-minor.json"]
    a, b = (_mutate(json.loads((FIXTURES / rng.choice(names)).read_text()), rng) for _ in range(2))
    loaded = []
    for n, data in enumerate((a, b)):
        p = tmp_path / f"{n}.json"
        p.write_text(json.dumps(data))
        try:
            loaded.append(load_report(str(p)))
        except ReportError as e:
            assert "\n" not in str(e)
    if len(loaded) == 2:
        d = compare(*loaded)
        for fmt in ("text", "json", "markdown"):
            assert render(d, fmt)
    summarize([str(tmp_path / "0.json"), str(tmp_path / "1.json")])


def _too_deep_reference(data) -> bool:
    """The plain walk the fast check replaced: any value deeper than MAX_DEPTH, or an odd number."""
    import math

    from envdoctor.core.untrusted import MAX_DEPTH

    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(value, float) and not math.isfinite(value) or isinstance(value, int) and abs(value) >= 1 << 64:
            return True
        if isinstance(value, dict):
            stack += [(v, depth + 1) for v in value.values()]
        elif isinstance(value, list):
            stack += [(v, depth + 1) for v in value]
    return False


@pytest.mark.slow
def test_the_fast_depth_and_number_check_agrees_with_a_plain_walk():
    from envdoctor.core.untrusted import MAX_DEPTH
    from envdoctor.core.untrusted import too_deep as _too_deep

    class Sub(dict):  # not what json.loads makes: the check must not skip it
        pass

    leaves = ("s", 1, 1.5, None, True, [], {}, float("inf"), float("nan"), 2**64, -(2**64), 2**64 - 1)
    for depth in range(MAX_DEPTH - 3, MAX_DEPTH + 3):
        for leaf in leaves:
            for box in (list, dict, Sub):
                v = leaf
                for _ in range(depth - 1):
                    v = [v] if box is list else box(k=v)
                assert bool(_too_deep(v)) == _too_deep_reference(v), (depth, leaf, box)
    rng = random.Random(16)

    def junk(d=0):
        c = rng.randrange(10)
        if d > MAX_DEPTH + 4 or c < 3:
            return rng.choice(leaves[:5] + leaves[7:])
        if c < 6:
            return [junk(d + 1) for _ in range(rng.randrange(4))]
        return (Sub if c == 6 else dict)({str(i): junk(d + 1) for i in range(rng.randrange(4))})

    for _ in range(3000):
        v = junk()
        assert bool(_too_deep(v)) == _too_deep_reference(v)
    report = json.loads((FIXTURES / "v1.0-gpu-h200.json").read_text())
    assert _too_deep(report) == ""
