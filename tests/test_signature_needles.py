"""The literal prefilter of the signature catalog (Signature.needles): find() skips, without
compiling it, a pattern whose literals are absent from the text, and never skips one that
matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envdoctor.core.signatures import Signature, _needles, find

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _sig(pattern: str, ignore_case: bool = False) -> Signature:
    return Signature("t.x", pattern, "cause", "cause_id", "check.x", "fix", ignore_case=ignore_case)


@pytest.mark.parametrize(
    ("pattern", "needles"),
    [
        ("no kernel image is available", ("no kernel image is available",)),
        ("TritonMissing|Cannot find a working triton", ("TritonMissing", "Cannot find a working triton")),
        ("libcuda\\.so(?:\\.1)? missing", ("libcuda.so",)),  # the optional group cuts the run
        ("versions? mismatch", (" mismatch",)),  # the 's' before '?' is optional
        ("Bus\\s{1,10}error", ("error",)),  # quantifier digits are no literal
        ("abcd+efgh", ("efgh",)),  # a repeated character ends the run
        ("Found [^)\\n]{0,40} which is too old", (" which is too old",)),  # a ')' inside a class
        ("(?i)no kernel image", ()),  # an inline flag: no shortcut
        ("ab|cdefgh", ()),  # one branch too short to tell: no shortcut
        ("(?P<err>CUDA error: [^\\n]+|cudaError\\w+)", ("CUDA error: ", "cudaError")),  # a group of alternatives: one needle each
        (
            "(?:No matching distribution found for|Could not find a version) (?P<req>torch)",
            ("No matching distribution found for", "Could not find a version"),
        ),
        ("(?:abcd|ef) tail", (" tail",)),  # the branch's own run, when it has one
        ("(?:abcd|ef)x", ()),  # one alternative too short to tell: no shortcut
        ("(?:abcd|efgh)?xy", ()),  # the group is optional: its alternatives need not occur
        ("Permission denied", ("permission denied",)),
    ],
)
def test_needles(pattern, needles):
    assert _needles(pattern, ignore_case=pattern == "Permission denied") == needles


def test_a_pattern_whose_literal_is_absent_is_not_compiled():
    sig = _sig("no kernel image is available for execution on the device")
    assert find("RuntimeError: CUDA out of memory", [sig]) == []
    assert "regex" not in sig.__dict__  # cached_property: compiled only when searched
    assert find("CUDA error: no kernel image is available for execution on the device", [sig])
    assert "regex" in sig.__dict__


def test_ignore_case_and_non_ascii_text():
    sig = _sig("Permission denied", ignore_case=True)
    assert find("PERMISSION DENIED: '/dev/shm'", [sig])
    assert find("ſ PERMISSION DENIED", [sig])  # non-ASCII text: searched without the shortcut


def _texts():
    for split in ("dev", "test"):
        for line in (FIXTURES / "triage_corpus" / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                yield json.loads(line)["paste"]
    for d in ("triage", "pastes"):
        for f in sorted((FIXTURES / d).glob("*.txt")):
            yield f.read_text(encoding="utf-8", errors="replace")


def test_the_prefilter_never_drops_a_match_of_the_catalog():
    from envdoctor.core.registry import discover

    sigs = discover(plugins=False).signatures
    assert sum(bool(s.needles) for s in sigs) > len(sigs) // 2
    checked = 0
    for text in _texts():
        lower = text.lower()
        for s in sigs:
            if s.needles and s.regex.search(text):
                hay = lower if s.ignore_case else text
                assert any(n in hay for n in s.needles), (s.id, s.needles)
                checked += 1
    assert checked > 100
