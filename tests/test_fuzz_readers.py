"""Seeded fuzzing of every reader of untrusted input: pastes (triage), reports (diff, fleet,
JUnit), baselines, configs and rank summaries (rank 0's merge).

Seeds are real inputs (tests/fixtures), mutated by tests/fuzz.py. Each case runs in this
process under an alarm: a case must end in a normal answer or the reader's one-line error,
never an uncaught exception, a crashed check or a hang. The fast lane (a few hundred cases
per reader) runs in the fast lane (``pytest -m "not slow"``); ``pytest -m slow tests/test_fuzz_readers.py`` runs
20,000 per reader (``FUZZ_CASES`` to change it).
"""

from __future__ import annotations

import json
import os
import signal
import traceback
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.fuzz import FIXTURES, cases, seed_files

FAST = 200
SLOW = int(os.environ.get("FUZZ_CASES", "20000"))
CASE_SECONDS = 20  # far above any case's time; only a hang reaches it


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"no answer within {CASE_SECONDS} s")


def _run(reader: Callable[[bytes, Path], None], seeds: list[bytes], n: int, tmp: Path, salt: int) -> None:
    failures = []
    old = signal.signal(signal.SIGALRM, _alarm)
    try:
        for k, data in cases(seeds, n, salt):
            signal.alarm(CASE_SECONDS)
            try:
                reader(data, tmp)
            except Exception as e:  # noqa: BLE001 - any escape is the failure being looked for
                where = traceback.extract_tb(e.__traceback__)[-1]
                failures.append(f"case {k} ({len(data)} bytes): {type(e).__name__}: {str(e)[:200]} at {where.filename}:{where.lineno}")
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, old)
    kinds = {f.split(": ", 1)[1]: f for f in reversed(failures)}  # one case per kind of failure
    assert not failures, f"{len(failures)} of {n} cases failed, {len(kinds)} kinds:\n" + "\n".join(list(kinds.values())[:20])


# -- readers ------------------------------------------------------------------------------------

_REG = []


def _registry():
    if not _REG:
        from envdoctor.core.registry import discover

        _REG.append(discover(()))
    return _REG[0]


def paste(data: bytes, tmp: Path) -> None:
    from envdoctor.commands.triage import InputError, decode
    from envdoctor.core.triage import triage
    from envdoctor.reporters.triage import render
    from envdoctor.sources import read_paste

    try:
        text = decode(data, "case")
    except InputError:
        return
    result = triage(_registry(), read_paste(text), text)
    crashed = [r for r in result.rows if r.message.startswith(("check crashed", "check raised"))]
    assert not crashed, f"{crashed[0].id}: {crashed[0].message}"
    for fmt in ("text", "json", "markdown"):
        render(result, fmt, "case").encode("utf-8")


def _write(tmp: Path, name: str, data: bytes) -> Path:
    p = tmp / name
    p.write_bytes(data)
    return p


def report(data: bytes, tmp: Path) -> None:
    from envdoctor.commands import diff, fleet
    from envdoctor.core.redact import scrub_data
    from envdoctor.core.report import ReportError, load_report
    from envdoctor.reporters.json import from_dict
    from envdoctor.reporters.junit import render_junit

    path = _write(tmp, "node.json", data)
    summary = fleet.summarize([str(path)])  # fleet reads any file: one row when it is bad
    fleet.render_text(summary).encode("utf-8")
    fleet.render_json(summary).encode("utf-8")
    try:
        loaded = load_report(str(path))
    except ReportError as e:
        assert "\n" not in str(e)
        return
    base = load_report(str(FIXTURES / "reports" / "v1.0-cpu-box.json"))
    d = diff.compare(scrub_data(base), scrub_data(loaded), "a.json", "b.json")
    for fmt in ("text", "json", "markdown"):
        diff.render(d, fmt).encode("utf-8")
    try:
        parsed = from_dict(dict(loaded))
    except (KeyError, ValueError, TypeError, AttributeError):  # fleet's one row for such a report
        return
    ET.fromstring(render_junit(parsed).encode("utf-8"))


def baseline(data: bytes, tmp: Path) -> None:
    from envdoctor.sources.baseline import BaselineError, load_baseline

    try:
        b = load_baseline(str(_write(tmp, "baseline.json", data)))
    except BaselineError as e:
        assert "\n" not in str(e)
        return
    b.stack()
    json.dumps(b.as_fact(), default=str).encode("utf-8")


def config(data: bytes, tmp: Path) -> None:
    from envdoctor.core.config import ConfigError, expectation_specs, read_config

    try:
        conf = read_config(_write(tmp, "envdoctor.toml", data))
    except ConfigError as e:
        assert "\n" not in e.message.strip()
        return
    for profile in ("default", "build", "full"):
        expectation_specs(conf, profile)


def summaries(data: bytes, tmp: Path) -> None:
    from envdoctor.core.report import Report, rank_summaries
    from envdoctor.modes.distributed import merge_results
    from envdoctor.reporters.json import to_dict
    from envdoctor.reporters.text import render_text

    try:
        raw = json.loads(data)
    except (ValueError, RecursionError):  # the store's JSON: the probe's reader refuses it
        return
    good, bad = rank_summaries(raw)
    merged = merge_results(good) + bad
    r = Report("0", "now", 0.0, {}, tuple(merged))
    render_text(r).encode("utf-8", "backslashreplace")
    json.dumps(to_dict(r))


def _baseline_seeds() -> list[bytes]:
    from envdoctor.sources.baseline import baseline_data

    out = []
    for p in sorted((FIXTURES / "reports").glob("*.json")):
        facts = json.loads(p.read_text()).get("facts") or {}
        out.append(json.dumps(baseline_data(facts, {"cuda_toolkit": "no nvcc"}, "0.1.0"), indent=1).encode())
    return out


CONFIG_SEEDS = [
    b'must_pass = ["triton.torch_pin"]\nskip = ["system.disk"]\n\n[expect]\npython = ">=3.10"\ntorch = ">=2.5"\n'
    b'torch_cuda = "==13.0"\ntriton = ">=3.5"\ndriver = ">=570"\ngpus = 8\ngpu_name = "*H200*"\ngpu_memory = "140GB"\n',
    b'[expect]\ntorch = "none"\ngpus = ">=4"\n',
    b'baseline = "baseline.json"\nlock = "requirements.txt"\n[expect]\ngpu_memory = "80GiB"\n',
    b'skip = []\nmust_pass = ["smoke"]\n',
]


def _summary_seeds() -> list[bytes]:
    keep = ("id", "title", "status", "message", "hint", "tags", "source")
    out = []
    for p in sorted((FIXTURES / "reports").glob("*.json")):
        d = json.loads(p.read_text())
        rows = [{k: r.get(k, "") if k != "tags" else r.get("tags", []) for k in keep} for r in d.get("results", [])]
        one = {"rank": 0, "host": "node-a", "counts": {"pass": 1}, "results": rows, "fleet": {"torch": "2.13.0", "gpu_count": "8"}}
        out.append(json.dumps({"0": one, "1": {**one, "rank": 1, "host": "node-b"}}).encode())
    return out


READERS = {
    "paste": (paste, lambda: seed_files("pastes/*.txt", "triage/*.txt", "reports/*.json")),
    "report": (report, lambda: seed_files("reports/*.json")),
    "baseline": (baseline, _baseline_seeds),
    "config": (config, lambda: CONFIG_SEEDS),
    "rank_summary": (summaries, _summary_seeds),
}


@pytest.mark.parametrize("name", list(READERS))
@pytest.mark.slow
def test_fuzz_fast_lane(name, tmp_path):
    reader, seeds = READERS[name]
    _run(reader, seeds(), FAST, tmp_path, salt=len(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", list(READERS))
def test_fuzz_slow_lane(name, tmp_path):
    reader, seeds = READERS[name]
    _run(reader, seeds(), SLOW, tmp_path, salt=1_000_003)
