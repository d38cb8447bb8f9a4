#!/usr/bin/env python3
"""Regenerate checks/data/live_index.json: the built-in modules that ``envdoctor triage`` reads
from data instead of importing (envdoctor.core.live_index), from full discovery. Run it after
changing a check or fact of such a module; tests/test_live_index.py says when it is due.

    python tools/regen_live_index.py [--check]

``--check``: write nothing, exit 1 when the file differs from what discovery finds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def render() -> str:
    from envdoctor.core import builtins
    from envdoctor.core.registry import catalog_needles, discover, live_entries

    data = {
        "about": "Written by tools/regen_live_index.py from full discovery; never edit by hand (envdoctor.core.live_index).",
        "modules": live_entries(builtins.load()),
        "needles": catalog_needles(discover(plugins=False).signatures),
    }
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the file is out of date; write nothing")
    args = ap.parse_args()
    from envdoctor.core import builtins

    path = Path(builtins.location() or ROOT / "checks") / builtins.declared("LIVE_INDEX")
    text = render()
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        print(f"{path}: {'up to date' if current == text else 'out of date'}")
        return 0 if current == text else 1
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
