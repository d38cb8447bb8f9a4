"""The GPU product table (checks/data/gpu_products.json, from NVIDIA's CUDA GPUs pages) and the
script that regenerates it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from envdoctor_checks import _release_data as rd

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("regen_gpu_table", ROOT / "tools" / "regen_gpu_table.py")
regen = importlib.util.module_from_spec(spec)
spec.loader.exec_module(regen)


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        # laptop parts by the names nvidia-smi and issue reports give them
        ("NVIDIA GeForce RTX 3080 Ti Laptop GPU", (8, 6)),
        ("NVIDIA GeForce RTX 4070 Laptop GPU", (8, 9)),
        ("GeForce GTX 960M", (5, 0)),
        ("GeForce GT 740M", (3, 0)),
        ("GeForce GTX 670M", (2, 1)),
        # workstation
        ("Quadro RTX 5000", (7, 5)),
        ("RTX 5000 16GB", (7, 5)),
        ("NVIDIA RTX 5000 Ada Generation", (8, 9)),
        ("Quadro K620", (5, 0)),
        ("NVIDIA T1000", (7, 5)),
        # data centre, with form-factor and memory suffixes
        ("Tesla V100S-PCIE-32GB", (7, 0)),
        ("Tesla K20m", (3, 5)),
        ("NVIDIA A100-SXM4-80GB", (8, 0)),
        ("NVIDIA H100 80GB HBM3", (9, 0)),
        # one name, two parts: the table keeps them apart
        ("NVIDIA TITAN X", (6, 1)),
        ("GeForce GTX TITAN X", (5, 2)),
    ],
)
def test_product_names_give_their_compute_capability(name, cc):
    assert rd.compute_capability(name) == cc


def test_unknown_names_stay_unknown():
    assert rd.compute_capability("Matrox G200eW") is None
    assert rd.compute_capability("") is None


HTML = """<table><tr><th>GPU</th><th>Compute Capability</th></tr>
<tr><td><a href="/x">GeForce RTX 4090</a></td><td>8.9</td></tr>
<tr> <td>NVIDIA H100</td> <td> 9.0 </td></tr></table>"""

TEXT = """GeForce Notebook Products
GPU\tCompute Capability
GeForce GTX 960M\t5.0
GeForce GT 705*\t3.5
|NVIDIA A100|\t8.0|
RTX A6000\t|8.6
"""


def test_the_page_parses_as_html_and_as_copied_text():
    assert regen.parse(HTML) == [("GeForce RTX 4090", "8.9", ""), ("NVIDIA H100", "9.0", "")]
    rows = regen.parse(TEXT)
    assert ("GeForce GTX 960M", "5.0", "GeForce Notebook Products") in rows
    assert ("GeForce GT 705", "3.5", "GeForce Notebook Products") in rows
    assert {r[0] for r in rows} == {"GeForce GTX 960M", "GeForce GT 705", "NVIDIA A100", "RTX A6000"}


def test_the_first_source_wins_a_product_listed_twice():
    data = regen.build([("new", "GeForce GTX 960M\t5.0\n"), ("old", "GeForce GTX 960M\t3.0\nGeForce GT 740M\t3.0\n")])
    by = {p["name"]: p for p in data["products"]}
    assert by["GeForce GTX 960M"]["cc"] == "5.0" and by["GeForce GTX 960M"]["source"] == "new"
    assert by["GeForce GT 740M"]["source"] == "old"


def test_the_shipped_table_is_what_the_script_makes_of_its_entries():
    data = rd.load_json(rd.PRODUCTS_FILE)
    assert len(data["products"]) > 200
    assert all(p["name"] and p["cc"] and p["source"] for p in data["products"])


@pytest.mark.parametrize(
    ("torch", "rocm", "has", "lacks"),
    [
        ("2.0.1+rocm5.4.2", None, "gfx1030", "gfx1100"),
        ("1.13.1+rocm5.2", None, "gfx90a", "gfx942"),
        ("2.2.2+rocm5.7", None, "gfx1100", "gfx942"),
        ("2.4.1+rocm6.1", None, "gfx942", "gfx1031"),
        ("2.3.1", "5.7", "gfx1100", "gfx942"),
    ],
)
def test_rocm_wheels_gfx_targets(torch, rocm, has, lacks):
    gfx = rd.rocm_gfx_targets(torch, rocm)
    assert has in gfx and lacks not in gfx


def test_rocm_releases_not_recorded_are_unknown():
    assert rd.rocm_gfx_targets("2.9.0+rocm6.4") is None and rd.rocm_gfx_targets(None) is None


def test_each_products_key_is_the_key_gpu_info_computes():
    # the keys are written by the regeneration script so that a lookup computes one key, not 238
    rows = rd.load_json(rd.PRODUCTS_FILE)["products"]
    assert rows and all(r["key"] == rd.product_key(r["name"]) for r in rows)
