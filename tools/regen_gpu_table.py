"""Regenerate checks/data/gpu_products.json: NVIDIA product names -> compute capability.

    python tools/regen_gpu_table.py                  # fetch NVIDIA's CUDA GPU pages (needs the network)
    python tools/regen_gpu_table.py --from a.html b.txt --source-name cuda-gpus-2017 cuda-gpus-2022
    python tools/regen_gpu_table.py --check          # exit 1 if the file would change

Sources: https://developer.nvidia.com/cuda-gpus and https://developer.nvidia.com/cuda-legacy-gpus.
The pages list each product beside its compute capability, in HTML tables (``<td>GeForce GTX
960M</td><td>5.0</td>``); copies of the page also come as tab- or ``|``-separated text. Both
are read. The first source given wins a product listed twice (list the newest page first).
The hand-curated family patterns in gpu_cc.json stay the fallback for names not listed here.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import urllib.request
from pathlib import Path

from envdoctor_checks._release_data import product_key  # the key gpu_info looks a name up by

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "checks" / "data" / "gpu_products.json"
URLS = ("https://developer.nvidia.com/cuda-gpus", "https://developer.nvidia.com/cuda-legacy-gpus")

CC = r"(\d{1,2}\.\d)"
# a table row of the page: <td>name</td> <td>cc</td> (tags inside the cells removed first)
HTML_ROW = re.compile(
    r"<tr[^>]{0,200}>\s{0,20}<t[dh][^>]{0,200}>([^<]{1,120})</t[dh]>\s{0,20}<t[dh][^>]{0,200}>\s{0,20}" + CC + r"\s{0,20}</t[dh]>", re.I
)
INNER_TAG = re.compile(r"<(?!/?t[dhr]\b)[^<>]{0,200}>", re.I)
TEXT_ROW = re.compile(r"^\s{0,4}\|?\s{0,4}([A-Za-z][^\t|]{1,120}?)\s{0,4}(?:\t|\|)[\s|]{0,6}" + CC + r"\s{0,4}\|?\s*$")
SECTION = re.compile(r"^\s{0,4}(?:#{1,4}\s{0,2})?((?:CUDA-Enabled |NVIDIA )?[A-Z][\w &/-]{2,80}(?:Products|GPUs))\s*$")


def parse(text: str) -> list[tuple[str, str, str]]:
    """(product, compute capability, section) rows of one copy of the page."""
    rows: list[tuple[str, str, str]] = []
    if "<td" in text.lower():
        flat = INNER_TAG.sub("", text)
        rows.extend((html.unescape(m.group(1)).strip(), m.group(2), "") for m in HTML_ROW.finditer(flat))
        return rows
    section = ""
    for line in text.splitlines():
        s = SECTION.match(line)
        if s and not TEXT_ROW.match(line):
            section = s.group(1).strip()
            continue
        m = TEXT_ROW.match(line)
        if m and m.group(1).strip().lower() != "gpu":
            rows.append((m.group(1).strip().rstrip("*").strip(), m.group(2), section))
    return rows


def build(named_texts: list[tuple[str, str]]) -> dict:
    products: dict[str, dict] = {}
    for source, text in named_texts:
        for name, cc, section in parse(text):
            products.setdefault(name.lower(), {"name": name, "key": product_key(name), "cc": cc, "section": section, "source": source})
    return {
        "generated": "tools/regen_gpu_table.py",
        "sources": [s for s, _ in named_texts],
        "matching": "envdoctor_checks._release_data.gpu_info: the normalised name (each row's key, written here), without vendor words and memory/form-factor "
        "suffixes, looked up exactly; then the family patterns of gpu_cc.json",
        "products": sorted(products.values(), key=lambda p: p["name"].lower()),
    }


def _fetch(url: str) -> str:
    req = urllib.request.Request(url, headers={"User-Agent": "envdoctor-regen"})
    with urllib.request.urlopen(req, timeout=60) as r:  # noqa: S310 - fixed https URLs
        return r.read(8 << 20).decode("utf-8", "replace")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="files", nargs="*", help="read saved copies instead of fetching")
    ap.add_argument("--source-name", nargs="*", help="a name per --from file (default: the file name)")
    ap.add_argument("--check", action="store_true", help="exit 1 if the output would change, write nothing")
    args = ap.parse_args(argv)
    if args.files:
        names = args.source_name or [Path(f).stem for f in args.files]
        texts = [(n, Path(f).read_text(encoding="utf-8")) for n, f in zip(names, args.files, strict=False)]
    else:
        texts = [(u, _fetch(u)) for u in URLS]
    data = build(texts)
    if not data["products"]:
        print("no products parsed; the page layout may have changed", file=sys.stderr)
        return 2
    out = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        return 0 if OUT.exists() and OUT.read_text(encoding="utf-8") == out else 1
    OUT.write_text(out, encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(data['products'])} products")
    return 0


if __name__ == "__main__":
    sys.exit(main())
