"""Reports stay small by default (JSON <= 64 KB, Markdown <= 20 KB), on this CPU box and on an
8-GPU node, and keep what diff, fleet and triage read; --full-facts keeps every fact whole."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from envdoctor.commands.diff import compare
from envdoctor.commands.fleet import extract_facts
from envdoctor.core.api import FactSpec
from envdoctor.core.compact import MAX_FACT_CHARS, compact_report
from envdoctor.core.registry import discover
from envdoctor.reporters.json import from_dict, render_json
from envdoctor.reporters.markdown import render_markdown
from envdoctor.sources import read_paste
from tests.conftest import run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "reports"
JSON_MAX = 64 * 1024
MARKDOWN_MAX = 20_000


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


# ---- a synthetic 8-GPU node: the H200 report, with the facts a real node has ------------------

_DRIVER_LIBS = (
    "libcuda.so.1 libcuda.so libcudadebugger.so.1 libnvidia-ml.so.1 libnvidia-ml.so libnvidia-ptxjitcompiler.so.1 "
    "libnvidia-nvvm.so.4 libnvidia-cfg.so.1 libnvidia-opencl.so.1 libnvidia-gpucomp.so.580.65.06 libnvidia-allocator.so.1 "
    "libnvidia-eglcore.so.580.65.06 libnvidia-glcore.so.580.65.06 libnvidia-tls.so.580.65.06 libnvidia-glsi.so.580.65.06 "
    "libnvidia-fbc.so.1 libnvidia-encode.so.1 libnvcuvid.so.1 libnvoptix.so.1 libGLX_nvidia.so.0 libEGL_nvidia.so.0"
).split()
_TOOLKIT = "cudart cublas cublasLt cufft curand cusolver cusparse nvrtc nvJitLink cupti nvToolsExt npp nvjpeg cufile".split()
_SYSTEM = (
    "X11 Xext Xrender Xrandr Xi Xfixes Xcursor Xinerama xcb xcb-shm xcb-render GL GLX EGL gbm drm drm_amdgpu wayland-client "
    "gtk-3 gdk-3 glib-2.0 gobject-2.0 gio-2.0 cairo pango-1.0 harfbuzz freetype fontconfig png16 jpeg tiff webp icuuc icui18n "
    "icudata xml2 xslt ssl crypto curl nghttp2 ssh2 krb5 gssapi_krb5 k5crypto ldap lber sasl2 z bz2 lzma zstd lz4 snappy "
    "boost_system boost_filesystem boost_thread boost_program_options boost_regex protobuf grpc++ absl_base re2 gflags glog "
    "tbb mkl_rt openblas lapack gfortran quadmath stdc++ gcc_s ffi python3.12 sqlite3 readline ncursesw tinfo uuid blkid mount "
    "selinux pcre2-8 systemd udev dbus-1 cap acl attr numa ibverbs rdmacm mlx5 efa fabric hwloc pmix ucx ucp ucs uct mpi"
).split()


def _ldconfig() -> dict:
    libs: dict[str, list[str]] = {}
    for stem in _SYSTEM:  # each in several versions, 64- and 32-bit: a desktop-ish GPU image
        for v in range(6):
            name = f"lib{stem}.so.{v}"
            libs[name] = [f"/lib/x86_64-linux-gnu/{name}", f"/lib/i386-linux-gnu/{name}"]
        libs[f"lib{stem}.so"] = [f"/lib/x86_64-linux-gnu/lib{stem}.so"]
    for name in _DRIVER_LIBS:
        libs[name] = [f"/lib/x86_64-linux-gnu/{name}", f"/lib/i386-linux-gnu/{name}"]
    for stem in _TOOLKIT:
        for v in ("12", "13"):
            libs[f"lib{stem}.so.{v}"] = [f"/usr/local/cuda-{v}.0/targets/x86_64-linux/lib/lib{stem}.so.{v}"]
        libs[f"lib{stem}.so"] = [f"/usr/local/cuda-13.0/targets/x86_64-linux/lib/lib{stem}.so"]  # the toolkit's dev links
    libs["libcudnn.so.9"] = ["/usr/lib/x86_64-linux-gnu/libcudnn.so.9"]
    return {"path": "/sbin/ldconfig", "libs": libs}


def _dists(base: dict) -> dict:
    site = "/usr/local/lib/python3.12/dist-packages"
    out = copy.deepcopy(base)
    for name in "cublas-cu13 cuda-runtime-cu13 cudnn-cu13 cufft-cu13 curand-cu13 cusolver-cu13 cusparse-cu13 nccl-cu13".split():
        out[f"nvidia-{name}"] = {"name": f"nvidia-{name}", "version": "13.0.1", "location": f"{site}/nvidia_{name}.dist-info"}
        out[f"nvidia-{name}"].update(requires=[], installer="pip", compiled=True)
    out["torch"]["requires"] += [f"nvidia-{n}==13.0.1; platform_system == 'Linux'" for n in ("cublas-cu13", "cudnn-cu13", "nccl-cu13")]
    out["torch"]["requires"] += ["filelock", "typing-extensions>=4.10.0", "sympy>=1.13.3", "networkx>=2.5.1", "jinja2", "fsspec>=0.8.5"]
    for i in range(170):  # an NGC-style image holds 150-200 distributions
        name = f"package-{i:03d}"
        requires = [f"dependency-{j}>={j}.0; python_version >= '3.9'" for j in range(i % 9)]
        if i % 10 == 0:
            requires.append("numpy<3,>=1.22")
        if i % 25 == 0:
            requires.append("torch>=2.4")
        out[name] = {
            "name": name.replace("-", "_").title() if i % 2 else name,
            "version": f"{i % 7}.{i % 13}.{i}",
            "location": f"{site}/{name}.dist-info",
        }
        out[name].update(requires=requires, installer="pip", compiled=i % 3 == 0)
    return out


def _mounts() -> list:
    layers = ":".join(f"/var/lib/docker/overlay2/l/{'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[i % 26] * 26}" for i in range(40))
    out = [
        {"mount_point": "/", "fstype": "overlay", "source": "overlay", "options": ["rw", "relatime", f"lowerdir={layers}"]},
        {"mount_point": "/dev/shm", "fstype": "tmpfs", "source": "shm", "options": ["rw", "nosuid", "nodev", "size=67108864k"]},
        {"mount_point": "/data", "fstype": "nfs4", "source": "filer:/export/data", "options": ["rw", "relatime", "vers=4.2"]},
    ]
    for mp, fs in (("/proc", "proc"), ("/sys", "sysfs"), ("/dev", "tmpfs"), ("/dev/pts", "devpts"), ("/sys/fs/cgroup", "cgroup2")):
        out.append({"mount_point": mp, "fstype": fs, "source": fs, "options": ["rw", "nosuid", "nodev", "noexec", "relatime"]})
    for i in range(8):
        out.append({"mount_point": f"/dev/nvidia{i}", "fstype": "devtmpfs", "source": "udev", "options": ["ro", "nosuid", "mode=755"]})
        out.append({"mount_point": f"/proc/driver/nvidia/gpus/0000:{i:02x}:00.0", "fstype": "proc", "source": "proc", "options": ["ro"]})
    for lib in _DRIVER_LIBS:
        out.append({"mount_point": f"/usr/lib/x86_64-linux-gnu/{lib}", "fstype": "ext4", "source": "/dev/nvme0n1p2", "options": ["ro"]})
    return out


def _loaded_libs() -> list:
    nv = "/usr/local/lib/python3.12/dist-packages/nvidia"
    names = [f"cudnn/lib/libcudnn{s}.so.9" for s in ("", "_ops", "_cnn", "_adv", "_graph", "_engines_precompiled", "_heuristic")]
    names += ["cublas/lib/libcublas.so.13", "cublas/lib/libcublasLt.so.13", "nccl/lib/libnccl.so.2", "cuda_runtime/lib/libcudart.so.13"]
    names += [
        "cuda_nvrtc/lib/libnvrtc.so.13",
        "nvjitlink/lib/libnvJitLink.so.13",
        "cusparse/lib/libcusparse.so.12",
        "cufft/lib/libcufft.so.12",
    ]
    libs = [
        {"name": n.rsplit("/", 1)[1], "path": f"{nv}/{n}", "realpath": f"{nv}/{n}", "provenance": "pip wheel (nvidia-*)"} for n in names
    ]
    libs.append({"name": "libcuda.so.1", "path": "/lib/x86_64-linux-gnu/libcuda.so.1", "provenance": "system"})
    libs[-1]["realpath"] = "/lib/x86_64-linux-gnu/libcuda.so.580.65.06"
    for lib in libs:
        lib.update(kind=lib["name"][3:].split(".")[0], version=lib["name"].rsplit(".so.", 1)[-1], via_ld_library_path=False)
    return libs


# The checks that list each GPU as an item.
PER_GPU_CHECKS = (
    "nvidia.gpus",
    "nvidia.persistence",
    "nvidia.mig",
    "nvidia.compute_mode",
    "nvidia.gpu_processes",
    "torch.arch_support",
    "torch.ptx_jit",
    "torch.cuda_available",
    "triton.gpu_supported",
    "triton.ptxas",
    "smoke.matmul",
)


def gpu_node_report() -> dict:
    """The H200 report as an 8-GPU node writes it with every fact whole."""
    gpu = json.loads((FIXTURES / "v1.0-gpu-h200.json").read_text())
    cpu = json.loads((FIXTURES / "v1.0-cpu-box.json").read_text())
    facts = gpu["facts"]
    gpus = [
        {**facts["gpus"][0], "index": i, "uuid": f"GPU-3f1c2a9e-8b7d-4c6e-9a51-2d0e7f4b1c{i:02d}", "serial": f"16540230198{i:02d}"}
        for i in range(8)
    ]
    facts.update(gpus=gpus, visible_gpus=copy.deepcopy(gpus), ldconfig=_ldconfig(), mounts=_mounts(), dists=_dists(facts["dists"]))
    facts["env_vars"]["CUDA_VISIBLE_DEVICES"] = "0,1,2,3,4,5,6,7"
    facts["torch_runtime"].update(device_count=8, devices=[facts["torch_runtime"]["devices"][0]] * 8, loaded_libs=_loaded_libs())
    facts["nvidia_query"] = {"gpus": [{"index": i, "clocks_throttle_reasons": "none", "ecc_errors": 0, "xid": []} for i in range(8)]}
    results = {r["id"]: r for r in cpu["results"] + gpu["results"]}  # the H200's own rows win
    for cid in PER_GPU_CHECKS:
        results[cid]["items"] = [
            {"name": f"GPU {i} (NVIDIA H200, sm_90)", "status": "pass", "message": "sm_90: native kernels (sm_90)"} for i in range(8)
        ]
    results["nvidia.gpus"]["details"] = {"gpus": copy.deepcopy(gpus)}
    results["torch.loaded_libraries"]["details"] = {
        "libraries": [lib["realpath"] for lib in _loaded_libs()],
        "ld_library_path_copies": [],
        "cudnn": 91300,
    }
    gpu["results"] = list(results.values())
    gpu["schema_version"] = "1.2"
    return gpu


@pytest.fixture(scope="module")
def providers() -> dict[str, FactSpec]:
    return discover(()).facts


@pytest.fixture(scope="module")
def gpu_full() -> dict:
    return gpu_node_report()


@pytest.fixture(scope="module")
def gpu_compact(gpu_full, providers):
    return compact_report(from_dict(copy.deepcopy(gpu_full)), providers)


def test_a_gpu_node_s_full_report_is_the_size_the_issue_reported(gpu_full):
    # Whole facts, fully indented, as the GPU machine's 308 KB report was: the test means something.
    assert len(json.dumps(gpu_full, indent=2)) > 250_000
    assert _size(render_json(from_dict(copy.deepcopy(gpu_full)))) > 2 * JSON_MAX  # the layout alone does not do it


def test_a_gpu_node_s_default_reports_are_small(gpu_compact):
    text, md = render_json(gpu_compact), render_markdown(gpu_compact)
    assert _size(text) <= JSON_MAX, _size(text)
    assert _size(md) <= MARKDOWN_MAX, _size(md)
    data = json.loads(text)
    assert data["schema_version"] == "1.2"
    assert data["facts_compacted"] == ["dists", "ldconfig", "mounts", "torch_runtime"]
    assert "#### Problems" in md or "No problems found." in md
    assert "<details><summary>GPUs (8)</summary>" in md  # the facts a maintainer reads first fit


def test_the_compact_facts_keep_what_the_checks_use(gpu_full, gpu_compact):
    facts = gpu_compact.facts
    # triton.libcuda reads libcuda.so.1 and libcuda.so from the cache; the GPU stack's libraries stay.
    libs = facts["ldconfig"]["libs"]
    assert libs["libcuda.so.1"] == gpu_full["facts"]["ldconfig"]["libs"]["libcuda.so.1"] and "libcuda.so" in libs
    assert {"libcudnn.so.9", "libnvidia-ml.so.1", "libcublasLt.so.13", "libcudart.so.12"} <= set(libs)
    assert "libX11.so.0" not in libs and facts["ldconfig"]["libs_total"] == len(gpu_full["facts"]["ldconfig"]["libs"])
    # A development link beside its versioned library is named without its paths; libcuda.so
    # (Triton links with -lcuda) keeps them.
    full_libs = gpu_full["facts"]["ldconfig"]["libs"]
    assert "libcudart.so" in full_libs and "libcudart.so" not in libs and "libcudart.so" in facts["ldconfig"]["dev_links"]
    assert libs["libcuda.so"] == full_libs["libcuda.so"] and "libcuda.so" not in facts["ldconfig"]["dev_links"]
    # The cache checks read mount points and ro/noexec; /dev/shm and network mounts stay.
    mounts = {m["mount_point"]: m for m in facts["mounts"]}
    assert {"/", "/dev/shm", "/data"} <= set(mounts) and "/proc" not in mounts and "/dev/nvidia0" not in mounts
    assert mounts["/"]["options"] == ["rw", "relatime"] and mounts["/data"]["fstype"] == "nfs4"
    # Every distribution stays, with version and compiled; the requirements checks read stay.
    full_dists, dists = gpu_full["facts"]["dists"], facts["dists"]
    assert set(dists) == set(full_dists)
    for key, d in full_dists.items():
        # A false `compiled` is left out: readers take a missing flag as false.
        assert dists[key]["version"] == d["version"] and bool(dists[key].get("compiled")) == bool(d.get("compiled"))
        assert dists[key].get("compiled") in (True, None)
        assert dists[key].get("name", key) == d["name"]  # diff shows names as the package spells them
    assert dists["torch"]["location"] == full_dists["torch"]["location"]
    assert "nvidia-nccl-cu13==13.0.1; platform_system == 'Linux'" in dists["torch"]["requires"]
    assert 'triton==3.6.0; platform_system == "Linux"' in dists["torch"]["requires"]
    assert "filelock" not in dists["torch"]["requires"]
    assert dists["package-000"]["requires"] == ["numpy<3,>=1.22", "torch>=2.4"]
    assert dists["package-002"] == {"version": "2.2.2"}  # name, installer, location, a false compiled and unjudged requirements go
    assert dists["package-001"] == {"name": "Package_001", "version": "1.1.1"}
    assert dists["torch"]["installer"] == "pip" and dists["Package-000".lower()]["compiled"] is True
    # Each loaded library by name and provenance; its path is in torch.loaded_libraries' items.
    loaded = facts["torch_runtime"]["loaded_libs"]
    full_loaded = gpu_full["facts"]["torch_runtime"]["loaded_libs"]
    assert [lib["name"] for lib in loaded] == [lib["name"] for lib in full_loaded]
    assert all(set(lib) <= {"name", "provenance", "via_ld_library_path"} for lib in loaded)
    assert facts["gpus"] == gpu_full["facts"]["gpus"]  # small facts stay whole


def test_diff_sees_no_change_between_a_full_and_a_compact_report(gpu_full, gpu_compact):
    compact = json.loads(render_json(gpu_compact))
    full = json.loads(render_json(from_dict(copy.deepcopy(gpu_full))))
    d = compare(full, compact)
    assert d.identical, d.to_dict()
    # ... and still sees a change in any one package, compiled flag included.
    changed = copy.deepcopy(compact)
    changed["facts"]["dists"]["package-003"]["version"] = "9.9.9"
    moved = compare(full, changed).dists_changed
    assert [(c.name, c.a, c.b, c.compiled, c.compiled_from) for c in moved] == [("Package_003", "3.3.3", "9.9.9", True, "record")]


def test_fleet_and_triage_read_the_same_stack_from_a_compact_report(gpu_full, gpu_compact):
    compact_text = render_json(gpu_compact)
    full_text = render_json(from_dict(copy.deepcopy(gpu_full)))
    assert extract_facts(json.loads(compact_text)["facts"]) == extract_facts(json.loads(full_text)["facts"])
    pasted, pasted_full = read_paste(compact_text), read_paste(full_text)
    assert "envdoctor_json" in pasted.kinds
    assert pasted.facts["dists"]["torch"]["version"] == pasted_full.facts["dists"]["torch"]["version"] == "2.11.0+cu130"
    assert len(pasted.facts["dists"]) == len(pasted_full.facts["dists"])
    md = read_paste(render_markdown(gpu_compact))
    assert md.facts["driver"]["version"] == "580.65.06"


def test_a_plugin_fact_without_a_rule_is_kept_unless_huge():
    from envdoctor.core.report import Report

    report = Report("0", "t", 0.0, {}, (), facts={"small": {"a": 1}, "huge": ["x" * 100] * 1000, "gone": {"unavailable": "no"}})
    out = compact_report(report, {})
    assert out.facts["small"] == {"a": 1} and out.facts["gone"] == {"unavailable": "no"}
    assert out.facts["huge"] == {"omitted": f"{len(json.dumps(report.facts['huge']))} characters; rerun with --full-facts to keep it"}
    assert out.facts_compacted == ("huge",) and len(json.dumps(report.facts["huge"])) > MAX_FACT_CHARS


def test_a_broken_compact_rule_does_not_cost_the_report():
    from envdoctor.core.report import Report

    def boom(value):
        raise ValueError("bug")

    spec = FactSpec("f", lambda: None, (), compact=boom)
    report = Report("0", "t", 0.0, {}, (), facts={"f": [1, 2, 3], "g": ["y" * 100] * 1000})
    out = compact_report(report, {"f": spec, "g": FactSpec("g", lambda: None, (), compact=boom)})
    assert out.facts["f"] == [1, 2, 3]  # small: kept whole
    assert "its compact rule failed (ValueError: bug)" in out.facts["g"]["omitted"] and out.facts_compacted == ("g",)


def test_old_reports_load_and_say_their_facts_are_whole():
    for name in ("v1.0-gpu-h200.json", "v1.4-future-minor.json"):
        report = from_dict(json.loads((FIXTURES / name).read_text()))
        assert report.facts_compacted == ()


# ---- a real run here -----------------------------------------------------------------------------


@pytest.mark.slow
def test_a_real_run_here_is_small_and_full_facts_keep_everything(tmp_path):
    out, md = tmp_path / "r.json", tmp_path / "r.md"
    done = run_cli("check", "--format", "json", "--output", str(out), "--markdown", str(md))
    assert done.returncode == 0, done.stderr
    assert _size(out.read_text()) <= JSON_MAX and _size(md.read_text()) <= MARKDOWN_MAX
    data = json.loads(out.read_text())
    assert data["options"]["full_facts"] is False and "ldconfig" in data["facts_compacted"]
    total = data["facts"]["ldconfig"]["libs_total"]
    full = tmp_path / "full.json"
    # The checks that read the cache, the mounts and the packages, quickly.
    picked = "toolchain.libgomp,compile.inductor_cache,torch.numpy_abi"
    done = run_cli("check", "--select", picked, "--full-facts", "--format", "json", "--output", str(full))
    assert done.returncode == 0, done.stderr
    whole = json.loads(full.read_text())
    assert whole["options"]["full_facts"] is True and whole["facts_compacted"] == []
    assert len(whole["facts"]["ldconfig"]["libs"]) == total > len(data["facts"]["ldconfig"]["libs"])
    assert len(whole["facts"]["mounts"]) > len(data["facts"]["mounts"])  # /proc, /sys, ... are back
    assert all("requires" in d and "location" in d for d in whole["facts"]["dists"].values())
    assert not all("location" in d for d in data["facts"]["dists"].values())


def test_markdown_of_a_full_facts_run_may_use_what_github_allows(gpu_full):
    from envdoctor.reporters.markdown import GITHUB_LIMIT

    data = copy.deepcopy(gpu_full)
    data["options"]["full_facts"] = True
    md = render_markdown(from_dict(data))
    assert MARKDOWN_MAX < len(md) < GITHUB_LIMIT
    assert md.count("<details>") == md.count("</details>")
