"""Offline release data: lookups, GPU name matching, unknown inputs, and that every row names its source."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from envdoctor_checks import _cuda_compat as compat
from envdoctor_checks import _release_data as rd

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "checks" / "data"


def load_regen():
    spec = importlib.util.spec_from_file_location("regen_release_data", ROOT / "tools" / "regen_release_data.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---- torch releases ----------------------------------------------------------------------------


def test_release_matches_local_tag_to_its_line():
    rel = rd.torch_release("2.5.1+cu124")
    assert rel.version == "2.5.1" and rel.line.line == "2.5"
    assert rel.default_cuda == "12.4" and rel.default_build == "cu124"
    assert rd.torch_line("2.5.1+cu124") is rel.line
    assert rd.torch_release("2.5.1") is rel


@pytest.mark.parametrize(
    "torch_version, package, specifier",
    [
        ("2.0.1", "triton", "==2.0.0"),
        ("2.1.2+cu121", "triton", "==2.1.0"),
        ("2.3.1", "triton", "==2.3.1"),
        ("2.4.0", "triton", "==3.0.0"),
        ("2.5.1+cu124", "triton", "==3.1.0"),
        ("2.7.0+cu128", "triton", "==3.3.0"),
        ("2.9.1", "triton", "==3.5.1"),
        ("2.11.0+cu130", "triton", "==3.6.0"),
        ("2.14.0", "triton", "~=3.8.0"),
    ],
)
def test_triton_pin(torch_version, package, specifier):
    pin = rd.triton_pin_for(torch_version)
    assert (pin.package, pin.specifier) == (package, specifier)
    assert "Linux" in pin.marker


def test_triton_pin_exact_and_compatible_release():
    assert rd.triton_pin_for("2.5.1").exact == "3.1.0"
    assert rd.triton_pin_for("2.5.1").allows("3.1.0") and not rd.triton_pin_for("2.5.1").allows("3.2.0")
    loose = rd.triton_pin_for("2.14.0")
    assert loose.exact is None
    assert loose.allows("3.8.2") is True and loose.allows("3.9.0") is False
    assert loose.allows("not-a-version") is None
    assert 'python_version < "3.13"' in rd.triton_pin_for("2.5.1").marker  # no Triton for 3.13 on 2.5


@pytest.mark.parametrize(
    "torch_version, expected",
    [
        ("2.0.1", "3.10"),
        ("2.1.0", "3.11"),
        ("2.3.1", "3.11"),
        ("2.4.1", "3.12"),
        ("2.5.1+cu121", "3.12"),
        ("2.6.0", "3.13"),
        ("2.9.1", "3.13"),
        ("2.10.0", "3.14"),
    ],
)
def test_dynamo_max_python(torch_version, expected):
    assert rd.dynamo_max_python(torch_version) == expected


def test_dynamo_evidence_is_quoted_from_the_release():
    rel = rd.torch_release("2.0.1")
    assert "Python 3.11+ not yet supported for torch.compile" in rel.dynamo_evidence
    assert "GIL disabled" in rd.torch_release("2.10.0").free_threading


def test_dynamo_for_a_source_build_of_a_known_line_uses_the_line():
    assert rd.dynamo_max_python("2.5.0a0+git1234abc") == "3.12"
    assert rd.torch_release("2.5.0a0+git1234abc") is None  # its pins are not the release's


def test_companions():
    assert rd.torchvision_for("2.0.1") == "0.15.2"
    assert rd.torchvision_for("2.5.1+cu124") == "0.20.1"
    assert rd.torchvision_for("2.11.0") == "0.26.0"
    assert rd.torchaudio_for("2.5.1") == "2.5.1"
    assert rd.torchaudio_for("2.11.0") is None  # torchaudio 2.11 no longer pins torch: not established


def test_python_wheels_and_matrix():
    assert "3.14t" in rd.python_wheels("2.9.0") and "3.9" not in rd.python_wheels("2.9.0")
    assert rd.python_wheels("2.0.1") == ("3.8", "3.9", "3.10", "3.11")
    line = rd.torch_line("2.8.0")
    assert (line.python_min, line.python_max, line.python_experimental) == ("3.9", "3.13", ("3.13t",))


def test_arch_lists_per_build():
    assert rd.arch_list("2.5.1+cu124") == ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")
    assert rd.arch_list("2.0.1", "11.7")[0] == "3.7"
    assert rd.arch_list("2.8.0", "12.9")[-1] == "12.0+PTX"
    assert rd.arch_list("2.8.0", "cu128") == ("7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0")
    assert rd.arch_list("2.13.0+cu130") == ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0+PTX")
    assert rd.arch_flags("2.8.0", "12.9")[-2:] == ("sm_120", "compute_120")


@pytest.mark.parametrize(
    "torch_version, gpu, how",
    [
        ("2.5.1+cu124", "NVIDIA GeForce RTX 5090", "none"),
        ("2.8.0+cu128", "NVIDIA GeForce RTX 5090", "sass"),
        ("2.8.0+cu128", "NVIDIA GeForce GTX 1080 Ti", "none"),
        ("2.8.0+cu126", "NVIDIA GeForce GTX 1080 Ti", "sass"),
        ("2.13.0+cu130", "Tesla V100-SXM2-32GB", "none"),
        ("2.13.0+cu130", "NVIDIA GB10", "sass"),  # sm_120 SASS runs on 12.1
    ],
)
def test_arch_flags_feed_cuda_compat(torch_version, gpu, how):
    cc = "{}.{}".format(*rd.compute_capability(gpu))
    assert compat.arch_match(cc, list(rd.arch_flags(torch_version))).how == how


def test_nvidia_pins():
    assert rd.nvidia_pins("2.5.1")["nvidia-cudnn-cu12"] == "==9.1.0.70"
    assert rd.nvidia_pins("2.5.1+cu124")["nvidia-nccl-cu12"] == "==2.21.5"
    assert rd.nvidia_pins("2.5.1", "cu118") is None  # not established offline
    assert rd.nvidia_pins("2.11.0")["nvidia-cudnn-cu13"] == "==9.19.0.56"


def test_line_cuda_builds_and_release_matrix_facts():
    builds = {b.tag: b for b in rd.torch_line("2.7.1").cuda_builds}
    assert set(builds) == {"cu118", "cu126", "cu128"}
    assert builds["cu128"].status == "experimental" and builds["cu128"].cudnn == "9.7.1.26"
    assert builds["cu128"].arch_derived and builds["cu128"].arch_note
    assert rd.torch_line("2.14.0").build("13.2").status == "stable"
    assert not rd.torch_line("2.5.1").build("cu124").arch_derived
    observed = rd.torch_line("2.11.0").build("cu128")  # get_arch_list() quoted in pytorch/pytorch#182250
    assert not observed.arch_derived and "pytorch-issue-182250" in observed.sources
    assert observed.arch_list == ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")
    assert rd.arch_list("2.10.0+cu128")[0] == "7.0"  # Volta still in 2.10's cu128


@pytest.mark.parametrize(
    "version",
    ["2.5.3", "1.13.1", "2.99.0", "3.0.0", "2.16.0.dev20261101+cu130", "", None, "not a version", "2.6.0rc1"],
)
def test_unknown_versions_give_none(version):
    assert rd.torch_release(version) is None
    assert rd.triton_pin_for(version) is None
    assert rd.torchvision_for(version) is None
    assert rd.python_wheels(version) == ()


def test_unknown_builds_give_none():
    assert rd.arch_list("2.8.0", "cu118") is None
    assert rd.arch_list("2.5.1+cpu") is None
    assert rd.arch_list("2.5.1+rocm6.2") is None
    assert rd.arch_list("2.5.1") is None  # no build named
    assert rd.arch_list("2.99.0+cu124") is None
    assert rd.arch_list("2.5.0a0+git123", "cu124") is None
    assert rd.dynamo_max_python("2.99.0") is None
    assert rd.torch_line("9.9") is None


@pytest.mark.parametrize(
    "text, tag",
    [
        ("12.4", "cu124"),
        ("12.4.1", "cu124"),
        ("cu130", "cu130"),
        ("CU118", "cu118"),
        ("118", "cu118"),
        ("13.0", "cu130"),
        ("cpu", None),
        ("", None),
    ],
)
def test_cuda_tag(text, tag):
    assert rd.cuda_tag(text) == tag


# ---- GPU names ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, cc",
    [
        ("NVIDIA H100 80GB HBM3", (9, 0)),
        ("NVIDIA H100 PCIe", (9, 0)),
        ("nvidia h100 nvl", (9, 0)),
        ("NVIDIA H100 80GB HBM3 MIG 1g.10gb", (9, 0)),
        ("NVIDIA H200", (9, 0)),
        ("NVIDIA GH200 480GB", (9, 0)),
        ("NVIDIA H20", (9, 0)),
        ("NVIDIA H800 PCIe", (9, 0)),
        ("Tesla V100-SXM2-32GB", (7, 0)),
        ("Tesla V100S-PCIE-32GB", (7, 0)),
        ("Tesla V100-PCIE-16GB", (7, 0)),
        ("Tesla T4", (7, 5)),
        ("NVIDIA A100-SXM4-80GB", (8, 0)),
        ("NVIDIA A100 80GB PCIe", (8, 0)),
        ("  NVIDIA   A100-SXM4-40GB  ", (8, 0)),
        ("NVIDIA A10", (8, 6)),
        ("NVIDIA A10G", (8, 6)),
        ("NVIDIA A30", (8, 0)),
        ("NVIDIA PG509-210", (8, 0)),
        ("NVIDIA A40", (8, 6)),
        ("NVIDIA L4", (8, 9)),
        ("NVIDIA L40S", (8, 9)),
        ("NVIDIA B200", (10, 0)),
        ("NVIDIA GB200", (10, 0)),
        ("NVIDIA B300 SXM6 AC", (10, 3)),
        ("NVIDIA GB10", (12, 1)),
        ("NVIDIA GeForce RTX 5090", (12, 0)),
        ("NVIDIA GeForce RTX 5090 D", (12, 0)),
        ("NVIDIA GeForce RTX 5060 Ti", (12, 0)),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", (12, 0)),
        ("NVIDIA GeForce RTX 4090", (8, 9)),
        ("NVIDIA GeForce RTX 4060 Laptop GPU", (8, 9)),
        ("NVIDIA RTX 6000 Ada Generation", (8, 9)),
        ("NVIDIA RTX 4000 SFF Ada Generation", (8, 9)),
        ("NVIDIA GeForce RTX 3090", (8, 6)),
        ("NVIDIA GeForce RTX 3070 Laptop GPU", (8, 6)),
        ("NVIDIA RTX A6000", (8, 6)),
        ("NVIDIA RTX A2000 12GB", (8, 6)),
        ("Quadro RTX 6000", (7, 5)),
        ("NVIDIA TITAN RTX", (7, 5)),
        ("NVIDIA GeForce RTX 2080 Ti", (7, 5)),
        ("NVIDIA GeForce GTX 1660 SUPER", (7, 5)),
        ("NVIDIA GeForce GTX 1080 Ti", (6, 1)),
        ("GeForce GTX 1050", (6, 1)),
        ("NVIDIA TITAN X (Pascal)", (6, 1)),
        ("NVIDIA TITAN Xp", (6, 1)),
        ("GeForce GTX TITAN X", (5, 2)),
        ("NVIDIA TITAN V", (7, 0)),
        ("Tesla P100-PCIE-16GB", (6, 0)),
        ("Tesla P40", (6, 1)),
        ("Tesla P4", (6, 1)),
        ("Quadro P4000", (6, 1)),
        ("Tesla M60", (5, 2)),
        ("Tesla K80", (3, 7)),
        ("Orin (nvgpu)", (8, 7)),
        ("NVIDIA Jetson AGX Orin", (8, 7)),
        ("NVIDIA Jetson Orin Nano", (8, 7)),
        ("NVIDIA Jetson Nano", (5, 3)),
        ("Xavier", (7, 2)),
        ("NVIDIA Jetson T5000", (11, 0)),
        # laptop and entry parts by their chip (Wikipedia's table): not the family their number suggests
        ("NVIDIA GeForce RTX 2050", (8, 6)),  # GA107 (Ampere), not the RTX 20 series' 7.5
        ("NVIDIA GeForce MX570", (8, 6)),
        ("NVIDIA GeForce MX450", (7, 5)),
        ("NVIDIA GeForce MX250", (6, 1)),
        ("NVIDIA GeForce GT 1030", (6, 1)),
        ("NVIDIA GeForce 940MX", (5, 0)),
        ("NVIDIA GeForce GTX 960M", (5, 0)),
        ("NVIDIA GeForce GTX 960", (5, 2)),  # the desktop part stays Maxwell 2
        ("NVIDIA GeForce MX130", (5, 0)),
    ],
)
def test_compute_capability_of_nvidia_smi_names(name, cc):
    assert rd.compute_capability(name) == cc


@pytest.mark.parametrize(
    "name",
    [
        "",
        None,
        "   ",
        "AMD Instinct MI300X",
        "Intel(R) Data Center GPU Max 1550",
        "llvmpipe (LLVM 15.0.7, 256 bits)",
        "NVIDIA A1000X",
    ],
)
def test_unknown_gpu_names_give_none(name):
    assert rd.compute_capability(name) is None
    assert rd.gpu_info(name) is None


def test_gpu_info_marks_derived_rows():
    assert rd.gpu_info("NVIDIA A10G").derived
    assert rd.gpu_info("NVIDIA A10").derived is None
    assert rd.gpu_info("NVIDIA H100 PCIe").family == "Hopper"


def test_normalize_gpu_name():
    assert rd.normalize_gpu_name("Tesla V100-SXM2-32GB") == "TESLA V100 SXM2 32GB"
    assert rd.normalize_gpu_name("NVIDIA TITAN X (Pascal)") == "NVIDIA TITAN X PASCAL"


# ---- provenance --------------------------------------------------------------------------------


def _source_ok(src: str, known) -> bool:
    return src in known or src.startswith(("https://", "pypi:")) or ":" in src and "@" in src


def test_data_files_carry_sources_and_generated_note():
    for name in ("torch_releases.json", "gpu_cc.json"):
        doc = json.loads((DATA / name).read_text())
        assert doc["generated"] and doc["sources"]
        assert all(isinstance(v, str) and v for v in doc["sources"].values())


def test_every_torch_row_has_a_source():
    known = rd.sources()
    for line in rd.torch_lines().values():
        assert line.sources and all(s in known for s in line.sources), line.line
        for build in line.cuda_builds:
            assert build.sources and all(s in known for s in build.sources), (line.line, build.tag)
            assert build.status is None or build.sources
    for rel in rd.torch_releases().values():
        assert rel.sources and all(_source_ok(s, known) for s in rel.sources), rel.version
    raw = json.loads((DATA / "torch_releases.json").read_text())
    for line, row in raw["lines"].items():
        for tag, build in row.get("cuda_builds", {}).items():
            if build.get("arch_source") == "failure-catalog" or build.get("arch_source") == ["failure-catalog"]:
                assert build["arch_derived"] and build["arch_note"], (line, tag)
    for version, row in raw["releases"].items():
        assert all(p.get("source") for p in row.get("pins", {}).values()), version
        assert row.get("triton") is None or row["source"], version
        assert row.get("dynamo") is None or row["dynamo"]["evidence"], version


def test_every_gpu_row_has_a_source():
    known = rd.sources()
    raw = json.loads((DATA / "gpu_cc.json").read_text())
    assert raw["matching"]
    for row in raw["gpus"]:
        srcs = [row["source"]] if isinstance(row["source"], str) else row["source"]
        assert srcs and all(s in known for s in srcs), row["name"]
        if not set(srcs) & {"nvidia-cuda-gpus", "nvidia-cuda-legacy-gpus", "nvidia-cuda-gpus-2022"}:
            assert row.get("derived"), row["name"]


def test_releases_cover_2_0_to_2_14():
    lines = set(rd.torch_lines())
    assert {f"2.{n}" for n in range(15)} <= lines
    assert all(rd.torch_release(f"2.{n}.0") for n in range(15))


def test_loading_is_lazy_and_never_imports_torch():
    code = (
        "import sys\n"
        "from envdoctor_checks import _release_data as r\n"
        "assert r.load_json.cache_info().currsize == 0\n"
        "assert r.torch_release('2.5.1') and r.compute_capability('Tesla T4') == (7, 5)\n"
        "assert 'torch' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_data_is_package_data():
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "data/*.json" in data["tool"]["setuptools"]["package-data"]["envdoctor_checks"]


# ---- the regeneration script's parsers (no network) -------------------------------------------

BUILD_CUDA_25 = """
TORCH_CUDA_ARCH_LIST="5.0;6.0;7.0;7.5;8.0;8.6"
case ${CUDA_VERSION} in
    12.4)
        if [[ "$GPU_ARCH_TYPE" = "cuda-aarch64" ]]; then
            TORCH_CUDA_ARCH_LIST="9.0"
        else
            TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};9.0"
        fi
        ;;
    11.8)
        TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};3.7;9.0"
        ;;
    11.[67])
        TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};3.7"
        ;;
    *)
        exit 1
        ;;
esac
"""

BUILD_CUDA_210 = """
TORCH_CUDA_ARCH_LIST="7.0;7.5;8.0;8.6;9.0"
case ${CUDA_VERSION} in
    12.6) TORCH_CUDA_ARCH_LIST="5.0;6.0;${TORCH_CUDA_ARCH_LIST}" ;;  # legacy
    12.9) TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};10.0;12.0+PTX"
        if [[ "$PACKAGE_TYPE" == "libtorch" ]]; then
            TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST//7.0;/}"
        fi
        ;;
    13.0)
        TORCH_CUDA_ARCH_LIST="7.5;8.0;8.6;9.0;10.0;$([[ "$ARCH" == "aarch64" ]] && echo "11.0;" || echo "")12.0+PTX"
        ;;
    *) echo "unknown cuda version $CUDA_VERSION"; exit 1 ;;
esac
"""


def test_regen_parses_build_cuda_scripts():
    regen = load_regen()
    assert regen.parse_build_cuda(BUILD_CUDA_25, "12.4") == ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]
    assert regen.parse_build_cuda(BUILD_CUDA_25, "11.7") == ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "3.7"]
    assert regen.parse_build_cuda(BUILD_CUDA_25, "12.1") is None
    assert regen.parse_build_cuda(BUILD_CUDA_210, "12.6") == ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]
    assert regen.parse_build_cuda(BUILD_CUDA_210, "12.9")[-1] == "12.0+PTX"
    assert regen.parse_build_cuda(BUILD_CUDA_210, "13.0") == ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0+PTX"]


def test_regen_parses_metadata_and_dynamo_gate():
    regen = load_regen()
    meta = (
        'Name: torch\nRequires-Dist: nvidia-cudnn-cu12 (==9.1.0.70) ; platform_system == "Linux"\n'
        'Requires-Dist: triton==3.1.0; platform_system == "Linux" and python_version < "3.13"\n'
        'Requires-Dist: cuda-toolkit[cublas,cudart]==13.0.2; platform_system == "Linux"\n'
        'Requires-Dist: opt-einsum>=3.3; extra == "opt-einsum"\n'
    )
    reqs = regen.requires_dist(meta)
    assert reqs[0] == 'nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"'
    assert regen.triton_requirement(reqs) == {
        "name": "triton",
        "specifier": "==3.1.0",
        "marker": 'platform_system == "Linux" and python_version < "3.13"',
    }
    assert regen.cuda_pins(reqs) == {"nvidia-cudnn-cu12": "==9.1.0.70", "cuda-toolkit[cublas,cudart]": "==13.0.2"}
    src = 'def f():\n    if sys.version_info >= (3, 14):\n        raise RuntimeError("torch.compile is not supported on Python 3.14+")\n'
    assert regen.dynamo_gate({"torch/__init__.py": src})["max_python"] == "3.13"
    assert regen.dynamo_gate({"torch/__init__.py": "x = 1\n"}) is None
    files = [
        {"filename": "torch-2.9.0-cp313-cp313t-manylinux_2_28_x86_64.whl"},
        {"filename": "torch-2.9.0-cp310-cp310-manylinux_2_28_x86_64.whl"},
    ]
    assert regen.python_tags(files) == ["3.10", "3.13t"]
