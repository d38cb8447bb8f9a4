"""Score `envdoctor triage` on the generalization corpus (tests/fixtures/triage_corpus/).

    python tools/score_triage_corpus.py            # dev split: score and every miss
    python tools/score_triage_corpus.py --split test --quiet   # the held-out split: the score only

Each line of ``dev.jsonl`` / ``test.jsonl`` is one public thread: ``url``, the verbatim
``paste``, the ``cause_id`` the thread established, the ``cause`` in words and the ``facts``
(substrings of the paste) that reveal it. The split was made once, by thread: a thread is in
``test`` when ``sha256(url) % 5 < 2``. "Named" means the top-ranked cause is a problem (exit 1)
with the thread's ``cause_id``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "triage_corpus"


def cases(split: str) -> Iterator[dict]:
    with (CORPUS / f"{split}.jsonl").open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def named(reg, case: dict) -> tuple[bool, str]:
    """Whether triage names the case's cause first, and what it named."""
    from envdoctor.core.triage import triage
    from envdoctor.sources import read_paste

    t = triage(reg, read_paste(case["paste"]), case["paste"])
    top = t.causes[0] if t.causes and t.causes[0].is_problem else None
    got = top.cause_id if top else "-"
    return got == case["cause_id"], got


def score(split: str, reg=None) -> tuple[int, int, list[tuple[str, str, str]]]:
    """(hits, total, misses as (url, expected, got))."""
    if reg is None:
        from envdoctor.core.registry import discover

        reg = discover()
    hits, total, misses = 0, 0, []
    for case in cases(split):
        total += 1
        ok, got = named(reg, case)
        hits += ok
        if not ok:
            misses.append((case["url"], case["cause_id"], got))
    return hits, total, misses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("dev", "test"), default="dev")
    ap.add_argument("--quiet", action="store_true", help="print the score only, not the misses")
    args = ap.parse_args(argv)
    hits, total, misses = score(args.split)
    print(f"{args.split}: {hits} of {total} ({100 * hits / total:.1f} %)")
    if not args.quiet:
        for url, want, got in misses:
            print(f"  miss {url}: expected {want}, got {got}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
