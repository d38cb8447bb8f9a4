"""Stack or silicon: the GPU health checks, the gpu_health fact through the contained NVML child
(fake pynvml in tests/fakes/nvml), and failing smokes citing their GPU's evidence.

The healthy values are the two H200s read on the GPU machine (tests/fixtures/gpu-explore:
explore-nvml.txt is nvidia-ml-py's readout, nvidia_smi_q.txt the same machine's nvidia-smi -q);
the Xid lines are users' real ones (tests/fixtures/xid, sources.toml)."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import psutil
import pytest

from envdoctor import Missing, ProbeError, ProbeRaised, Status, Unavailable
from envdoctor.testing import gather, run_check
from envdoctor_checks import _xid, health, nvidia, smoke
from envdoctor_checks._xid import KernelLog, parse_lines
from tests.checks.test_smoke import CUDA_TORCH, CannedProbe, gpu
from tests.fakes import HERE

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FAKE_NVML = str(HERE / "nvml")
NVML_CHECKS = (health.ecc, health.remapped_rows, health.recovery, health.pcie, health.nvlink, health.clocks)


def xids(name: str):
    return tuple(parse_lines((FIXTURES / "xid" / name).read_text().splitlines()))


def explored_h200s() -> list[dict]:
    """The NVML readout of explore-nvml.txt ("0 ecc_unc_vol 0", "0 nvlink 3 1 6", ...) in the
    shape the NVML child's --health query returns."""
    gpus: dict[int, dict] = {}
    for line in (FIXTURES / "gpu-explore" / "explore-nvml.txt").read_text().splitlines():
        m = re.match(r"^(\d+) (\w+) (.*)$", line)
        if not m:
            continue
        i, key, value = int(m.group(1)), m.group(2), m.group(3)
        g = gpus.setdefault(i, {"index": i, "unsupported": {}, "errors": {}, "nvlink": {"active": [], "inactive": []}, "pcie": {}})
        if key in ("name", "pci"):
            g["name" if key == "name" else "pci_bus_id"] = value
        elif key.startswith("pcie_") and not key.startswith("pcie_gen_max") or key == "pcie_gen_max":
            field = {"pcie_gen_cur": "gen", "pcie_gen_max": "max_gen", "pcie_w_cur": "width", "pcie_w_max": "max_width"}[key]
            g["pcie"][field] = int(value)
        elif key == "ecc_mode":
            cur, pending = (int(x) for x in re.findall(r"\d", value))
            g["ecc_mode"] = {"current": cur, "pending": pending}
        elif key.startswith("ecc_"):
            kind, scope = (
                {"unc": "uncorrected", "corr": "corrected"}[key.split("_")[1]],
                {"vol": "volatile", "agg": "aggregate"}[key.split("_")[2]],
            )
            g.setdefault("ecc", {}).setdefault(scope, {})[kind] = int(value)
        elif key == "remapped_rows":
            corr, unc, pending, failure = (int(x) for x in re.findall(r"\d+", value))
            g["remapped_rows"] = {"correctable": corr, "uncorrectable": unc, "pending": pending, "failure": failure}
        elif key == "retired_pending" and "NotSupported" in value:
            g["unsupported"]["retired_pages"] = "not supported on this GPU"
        elif key == "throttle":
            g["clocks_event_reasons"] = int(value)
        elif key == "nvlink":
            link, state, _version = (int(x) for x in value.split())
            g["nvlink"]["active" if state else "inactive"].append(link)
        elif key == "recovery" and value.split()[0].isdigit():
            g["recovery_action"] = int(value.split()[0])
    return [gpus[i] for i in sorted(gpus)]


def health_fact(gpus: list[dict], log: KernelLog | None = None, **kw) -> dict:
    log = log or KernelLog("/dev/kmsg")
    listed = [{"index": g["index"], "name": g.get("name"), "pci_bus_id": g.get("pci_bus_id")} for g in gpus]
    return {"nvml": {"gpus": gpus}, "nvml_reason": "", "nvml_hung": False, "gpus": listed, "kernel_log": log.to_dict(), **kw}


def nvml_env(mode: str = "h200", **extra) -> dict:
    return {**os.environ, "PYTHONPATH": FAKE_NVML, "FAKE_NVML_MODE": mode, **extra}


# ---- the healthy H200 machine: no false alarm --------------------------------------------------


def test_the_fixture_is_what_nvidia_smi_said_on_the_same_machine():
    smi = (FIXTURES / "gpu-explore" / "nvidia_smi_q.txt").read_text()
    h200s = explored_h200s()
    assert [g["pci_bus_id"] for g in h200s] == re.findall(r"^GPU (\S+)$", smi, re.M)
    assert re.findall(r"PCIe Generation\n\s+Max\s+: (\d)\n\s+Current\s+: (\d)", smi) == [("5", "5")] * 2
    assert all(g["pcie"] == {"gen": 5, "max_gen": 5, "width": 16, "max_width": 16} for g in h200s)
    assert all(g["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0} for g in h200s)
    assert all(len(g["nvlink"]["active"]) == 18 and g["recovery_action"] == 0 for g in h200s)


def test_every_health_check_passes_on_the_h200s_as_read():
    facts = {"gpu_health": health_fact(explored_h200s())}
    rows = {c.__name__: run_check(c, **facts) for c in (*NVML_CHECKS, health.retired_pages, health.xid)}
    assert {n: r.status for n, r in rows.items()} == {
        "ecc": Status.PASS,
        "remapped_rows": Status.PASS,
        "recovery": Status.PASS,
        "pcie": Status.PASS,
        "nvlink": Status.PASS,
        "clocks": Status.PASS,
        "retired_pages": Status.SKIP,  # Hopper answers Not Supported: it remaps rows instead
        "xid": Status.PASS,
    }
    assert rows["ecc"].message == "ECC clean (2 GPU(s))"
    assert rows["pcie"].message == "PCIe Gen5 x16 (2 GPU(s))"
    assert rows["nvlink"].message == "NVLink 18/18 up (2 GPU(s))"
    assert rows["clocks"].message == "clocks: GPU idle (2 GPU(s))"
    assert "not supported on this GPU" in rows["retired_pages"].message and "health.remapped_rows" in rows["retired_pages"].message
    assert rows["xid"].message == "no Xid since boot (read from /dev/kmsg)"


def test_an_idle_downshifted_link_passes_and_says_why_a_busy_one_warns():
    idle, busy = explored_h200s()
    idle["pcie"].update(gen=1, width=16)
    busy["pcie"].update(gen=3, width=8)
    busy["utilization_gpu"] = 97
    row = run_check(health.pcie, gpu_health=health_fact([idle, busy]))
    assert row.status is Status.WARN
    assert [i.status for i in row.items] == [Status.PASS, Status.WARN]
    assert "links slow down when idle" in row.items[0].message
    assert row.message == "GPU 1 (NVIDIA H200): PCIe Gen3 x8 of Gen5 x16 under load (97% busy)" and "reseat" in row.hint


def test_faults_each_name_the_gpu_and_what_to_do():
    g0, g1 = explored_h200s()
    g1["ecc"]["volatile"]["uncorrected"] = 2
    g1["remapped_rows"]["pending"] = 1
    g1["recovery_action"] = 1
    g1["nvlink"] = {"active": [i for i in range(18) if i != 4], "inactive": [4]}
    g1["clocks_event_reasons"] = 0x40
    facts = {"gpu_health": health_fact([g0, g1])}
    ecc = run_check(health.ecc, **facts)
    assert ecc.status is Status.FAIL and ecc.message == "GPU 1 (NVIDIA H200): 2 uncorrectable ECC errors since the driver loaded"
    assert "nvidia-smi -r" in ecc.hint and "not the software" in ecc.hint
    assert run_check(health.remapped_rows, **facts).status is Status.WARN
    rec = run_check(health.recovery, **facts)
    assert rec.status is Status.FAIL and rec.message == "GPU 1 (NVIDIA H200): driver reports GPU reset required"
    link = run_check(health.nvlink, **facts)
    assert link.status is Status.WARN and link.message == "GPU 1 (NVIDIA H200): NVLink 17/18 up (down: 4)"
    clocks = run_check(health.clocks, **facts)
    assert clocks.status is Status.WARN and "HW thermal slowdown" in clocks.message and "cooling" in clocks.hint


def test_a_lost_gpu_is_a_recovery_failure():
    g0, g1 = explored_h200s()
    g1["errors"] = {"ecc": {"code": 15, "text": "GPU is lost"}}
    row = run_check(health.recovery, gpu_health=health_fact([g0, g1]))
    assert row.status is Status.FAIL and row.message == "GPU 1 (NVIDIA H200): NVML reports the GPU is lost"


# ---- Xid events --------------------------------------------------------------------------------


def gpu_at(pci: str, index: int = 0) -> dict:
    g = explored_h200s()[0]
    return {**g, "index": index, "pci_bus_id": pci}


def test_a_hardware_xid_fails_on_its_gpu_with_class_and_time():
    log = KernelLog("journalctl", xids("gpu-operator-1146.log"))
    row = run_check(health.xid, gpu_health=health_fact([gpu_at("00000000:07:00.0", 0), gpu_at("00000000:0A:00.0", 1)], log))
    assert row.status is Status.FAIL
    assert row.message.startswith("GPU 0: Xid 48 (double-bit ECC error) at boot+3m [hardware]")
    assert "not the software" in row.hint and _xid.CATALOG_URL in row.hint
    assert [e["code"] for e in row.details["events"]][:1] == [48]


def test_application_xids_pass_and_say_it_is_the_program():
    log = KernelLog("dmesg", xids("pytorch-51382.log"))
    row = run_check(health.xid, gpu_health=health_fact([gpu_at("00000000:3D:00.0")], log))
    assert row.status is Status.PASS
    assert "Xid 43 (GPU stopped processing a program)" in row.message and "[application]" in row.message


def test_an_xid_of_a_gpu_nvml_no_longer_lists_is_shown():
    log = KernelLog("/dev/kmsg", xids("open-gpu-kernel-modules-1151.log"))
    row = run_check(health.xid, gpu_health=health_fact([gpu_at("00000000:01:00.0")], log))
    assert row.status is Status.FAIL and row.items[0].name == "GPU at PCI 0000:2b:00 (not listed by NVML)"
    assert "Xid 79 (GPU has fallen off the bus)" in row.message


def test_an_unreadable_kernel_log_is_a_skip_with_the_reason():
    log = KernelLog("", reason="not root: the kernel log is not readable (/dev/kmsg: Operation not permitted)")
    row = run_check(health.xid, gpu_health=health_fact(explored_h200s(), log))
    assert row.status is Status.SKIP and row.message.startswith("Xid not checked: not root") and "dmesg" in row.message


def test_a_flood_of_xids_is_kept_small_but_counted():
    line = "[ {t}.0] NVRM: Xid (PCI:0000:00:06): 13, pid=42, name=python, Graphics Exception"
    events = parse_lines(line.format(t=100 + i) for i in range(1000))
    kept = _xid.compact(events, 5)
    assert len(kept) == 6 and kept[-1].repeated == 994 and kept[-1].since_boot == 1099.0
    log = KernelLog.from_dict(KernelLog("/dev/kmsg", tuple(kept)).to_dict())
    row = run_check(health.xid, gpu_health=health_fact(explored_h200s(), log))
    assert "Xid 13 (graphics engine exception) ×1000 at boot+1m" in row.message


# ---- the fact, through the contained NVML child ------------------------------------------------


def test_the_nvml_child_gathers_health_and_the_checks_judge_it(monkeypatch):
    monkeypatch.setattr(health, "read_kernel_log", lambda: KernelLog("/dev/kmsg"))
    env = nvml_env(FAKE_NVML_GPUS="2", FAKE_NVML_FAULT="ecc:1")
    query = {"nvml": nvidia.nvml_query(env), "errors": {}, "hung": {}}
    fact = gather(health.gpu_health, nvidia_query=query, env=env, gpus=query["nvml"]["gpus"])
    g0, g1 = fact["nvml"]["gpus"]
    assert (g0["pci_bus_id"], g0["minor_number"], g0["unsupported"]) == (
        "00000000:18:00.0",
        0,
        {"retired_pages": "not supported on this GPU"},
    )
    assert g1["ecc"]["volatile"]["uncorrected"] == 2 and fact["kernel_log"]["live"] is True
    row = run_check(health.ecc, gpu_health=fact)
    assert row.status is Status.FAIL and row.message.startswith("GPU 1 (NVIDIA H200): 2 uncorrectable")
    for check in (health.remapped_rows, health.recovery, health.pcie, health.nvlink, health.clocks, health.xid):
        assert run_check(check, gpu_health=fact).status is Status.PASS, check.__name__


@pytest.mark.slow
def test_a_hanging_health_query_is_one_failing_row_and_skips_not_a_hang(monkeypatch):
    monkeypatch.setattr(health, "HEALTH_TIMEOUT", 1.0)
    monkeypatch.setattr(health, "read_kernel_log", lambda: KernelLog("/dev/kmsg"))
    env = nvml_env("health_hang")
    query = {"nvml": nvidia.nvml_query(env), "errors": {}, "hung": {}}  # the driver query itself answers
    start = time.monotonic()
    fact = gather(health.gpu_health, nvidia_query=query, env=env, gpus=query["nvml"]["gpus"])
    assert time.monotonic() - start < 1.0 + 2 * 2 + 2
    assert psutil.Process().children(recursive=True) == []
    assert fact["nvml_hung"] and fact["nvml"] is None
    rec = run_check(health.recovery, gpu_health=fact)
    assert (
        rec.status is Status.FAIL
        and rec.message == "NVML did not answer the GPU health query within 1s: the driver or a GPU is likely wedged"
    )
    assert "nvidia-smi -r" in rec.hint
    ecc = run_check(health.ecc, gpu_health=fact)
    assert ecc.status is Status.SKIP and "likely wedged" in ecc.message
    assert run_check(health.xid, gpu_health=fact).status is Status.PASS  # the kernel log is still read


def test_without_nvml_the_child_is_not_run_and_xids_still_map_to_gpus(monkeypatch):
    log = KernelLog("/dev/kmsg", xids("open-gpu-kernel-modules-1151.log"))
    monkeypatch.setattr(health, "read_kernel_log", lambda: log)
    query = {
        "nvml": None,
        "errors": {"nvml": "NVML did not answer within 10s: the driver or a GPU is likely wedged"},
        "hung": {"nvml": "x"},
    }
    smi_gpus = [{"index": 0, "name": "NVIDIA H200", "pci_bus_id": "00000000:2B:00.0"}]
    fact = gather(health.gpu_health, nvidia_query=query, env={"PATH": ""}, gpus=smi_gpus)
    assert fact["nvml"] is None and fact["nvml_reason"].startswith("NVML is not available (NVML did not answer")
    assert run_check(health.recovery, gpu_health=fact).status is Status.SKIP  # nvidia.driver is the row for that hang
    row = run_check(health.xid, gpu_health=fact)
    assert row.status is Status.FAIL and row.items[0].name == "GPU 0"


def test_no_gpu_no_fact():
    with pytest.raises(Unavailable, match="no NVIDIA GPU"):
        gather(
            health.gpu_health,
            nvidia_query={"nvml": None, "errors": {}},
            env={},
            gpus=Missing("gpus", "no NVIDIA GPU or driver on this machine"),
            pci_gpus=[],
        )


def test_the_kernel_log_round_trips_through_the_report():
    log = KernelLog("dmesg", xids("gpu-operator-1146.log"), complete=False)
    again = KernelLog.from_dict(log.to_dict())
    assert again.source == "dmesg" and not again.complete
    assert [(e.code, e.pci, e.since_boot) for e in again.events] == [(e.code, e.pci, e.since_boot) for e in log.events]


# ---- failing smokes cite their GPU's evidence ---------------------------------------------------


def two_h200s_one_broken() -> tuple[dict, list[dict]]:
    g0, g1 = explored_h200s()
    g1["ecc"]["volatile"]["uncorrected"] = 2
    fell = "[ 7300.5] NVRM: Xid (PCI:0000:00:07): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    log = KernelLog("/dev/kmsg", tuple(parse_lines([fell])))
    visible = [{"index": g["index"], "name": g["name"], "pci_bus_id": g["pci_bus_id"]} for g in (g0, g1)]
    return health_fact([g0, g1], log), visible


def test_a_matmul_failing_on_a_gpu_with_hardware_evidence_says_so():
    fact, visible = two_h200s_one_broken()
    probe = CannedProbe(matmul={"size": 256, "gpus": [gpu(0), gpu(1, err=0.5)]})
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible, gpu_health=fact)
    assert row.status is Status.FAIL
    assert "— GPU 1: 2 uncorrectable ECC errors since the driver loaded, Xid 79 (GPU has fallen off the bus) at boot+2h01m: " in row.message
    assert row.message.endswith("the software is not the cause")
    assert row.hint.startswith("GPU 1: ") and "replace" in row.hint and "if it still fails: Inspect that GPU" in row.hint
    assert row.details["gpu_evidence"][0]["hardware_fault"] is True


def test_a_failing_smoke_on_a_clean_gpu_says_there_is_no_hardware_evidence():
    fact, visible = two_h200s_one_broken()
    raised = ProbeRaised("RuntimeError", "CUDA error: an illegal memory access was encountered")
    probe = CannedProbe(cudagraphs=raised)
    row = run_check(smoke.cudagraphs, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible, gpu_health=fact)
    assert row.status is Status.FAIL
    assert row.message.endswith("— GPU 0: no hardware evidence (ECC clean, no Xid since boot, no pending remap)")
    assert not row.hint.startswith("GPU 0")  # the smoke's own diagnosis stands


def test_cuda_visible_devices_renumbering_cites_the_right_gpu():
    fact, visible = two_h200s_one_broken()
    probe = CannedProbe(amp_compile={"ok": False, "dtype": "torch.bfloat16", "max_error": 3.0})
    row = run_check(
        smoke.amp_compile,
        probe=probe,
        torch_build=CUDA_TORCH,
        env={"CUDA_VISIBLE_DEVICES": "1"},
        gpus=visible,
        visible_gpus=visible[1:],
        gpu_health=fact,
    )
    assert "— GPU 0 (NVML GPU 1): 2 uncorrectable ECC errors" in row.message


def test_a_hung_gpu_smoke_keeps_its_error_row_with_the_evidence():
    fact, visible = two_h200s_one_broken()
    probe = CannedProbe(matmul=ProbeError("the matmul smoke did not finish within 120s"))
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible, gpu_health=fact)
    assert row.status is Status.ERROR
    assert "did not finish within 120s" in row.message and "GPU 1: 2 uncorrectable ECC errors" in row.message


def test_a_failure_rereads_the_live_kernel_log_for_the_xid_it_caused(monkeypatch):
    fact, visible = two_h200s_one_broken()
    fact["kernel_log"] = {**KernelLog("/dev/kmsg").to_dict(), "live": True}  # clean when gathered
    new = "[ 9000.0] NVRM: Xid (PCI:0000:00:06): 94, pid=77, name=python, Contained: SM (0x1). RST: No, D-RST: No"
    monkeypatch.setattr(health, "read_kernel_log", lambda: KernelLog("/dev/kmsg", tuple(parse_lines([new]))))
    probe = CannedProbe(triton_add=ProbeRaised("RuntimeError", "CUDA error: uncorrectable ECC error encountered"))
    dists = {"triton": "3.7.1", "numpy": "2.0"}
    row = run_check(
        smoke.triton_kernel, probe=probe, torch_build=CUDA_TORCH, dists=dists, env={}, gpus=visible, visible_gpus=visible, gpu_health=fact
    )
    # Gathered clean, the log read again after the failure holds the Xid the failure caused.
    assert "— GPU 0: Xid 94 (contained ECC error) at boot+2h30m: restart the affected application" in row.message


def test_without_the_fact_a_smoke_is_unchanged():
    _, visible = two_h200s_one_broken()
    probe = CannedProbe(matmul={"size": 256, "gpus": [gpu(0), gpu(1, err=0.5)]})
    row = run_check(smoke.matmul, probe=probe, torch_build=CUDA_TORCH, env={}, gpus=visible, visible_gpus=visible)
    assert row.status is Status.FAIL and " — " not in row.message and "gpu_evidence" not in row.details


# ---- device nodes ------------------------------------------------------------------------------


def dev_tree(tmp_path: Path, names: list[str]) -> Path:
    """A /dev stand-in whose nodes are links to /dev/null (a character device anyone may use)."""
    dev = tmp_path / "dev"
    dev.mkdir()
    for n in names:
        (dev / n).symlink_to("/dev/null")
    return dev


def test_device_nodes_present_pass(tmp_path, monkeypatch):
    monkeypatch.setattr(health, "DEV", str(dev_tree(tmp_path, ["nvidiactl", "nvidia-uvm", "nvidia0", "nvidia1"])))
    fact = health_fact(explored_h200s())
    for g, minor in zip(fact["nvml"]["gpus"], (0, 1), strict=True):
        g["minor_number"] = minor
    row = run_check(health.device_nodes, gpus=fact["gpus"], gpu_health=fact)
    assert row.status is Status.PASS and row.message.endswith("/nvidia1 present and readable/writable")


def test_a_missing_nvidia_uvm_is_the_cuda_unknown_error(tmp_path, monkeypatch):
    monkeypatch.setattr(health, "DEV", str(dev_tree(tmp_path, ["nvidiactl", "nvidia3"])))
    monkeypatch.setattr(health, "SYS_UVM", str(tmp_path / "no-such-module"))
    monkeypatch.setattr(health, "PROC_MODULES", str(tmp_path / "modules"))
    (tmp_path / "modules").write_text("nvidia 1 0 - Live 0x0\n")
    # Minor numbers from /proc/driver/nvidia/gpus when NVML gave none (the GPU is /dev/nvidia3).
    info = tmp_path / "gpus" / "0000:00:06.0"
    info.mkdir(parents=True)
    (info / "information").write_text("Model: \t\t NVIDIA H200\nIRQ:   \t\t 42\nDevice Minor: \t 3\n")
    monkeypatch.setattr(health, "PROC_GPUS", str(tmp_path / "gpus"))
    gpus = [{"index": 0, "name": "NVIDIA H200", "pci_bus_id": "00000000:00:06.0"}]
    row = run_check(health.device_nodes, gpus=gpus, container={"in_container": True})
    assert row.status is Status.FAIL
    assert row.message.startswith(
        "/dev/nvidia-uvm is missing (the nvidia_uvm module is not loaded): CUDA fails with 'CUDA unknown error'".replace(
            "/dev", str(tmp_path / "dev")
        )
    )
    assert "modprobe nvidia-uvm" in row.hint and "--gpus all" in row.hint
    assert [i.status for i in row.items] == [Status.PASS, Status.FAIL, Status.PASS]


@pytest.mark.skipif(os.getuid() == 0, reason="root may open any device node")
def test_a_node_this_user_cannot_open_fails(tmp_path, monkeypatch):
    dev = dev_tree(tmp_path, ["nvidia-uvm", "nvidia0"])
    (dev / "nvidiactl").symlink_to("/dev/kmsg")  # crw-r--r-- root
    monkeypatch.setattr(health, "DEV", str(dev))
    row = run_check(
        health.device_nodes,
        gpus=[{"index": 0, "pci_bus_id": "x"}],
        gpu_health=health_fact([{"index": 0, "pci_bus_id": "x", "minor_number": 0}]),
    )
    assert row.status is Status.FAIL and "not readable and writable by uid" in row.message and "video" in row.hint


def test_device_nodes_skip_without_gpus():
    row = run_check(health.device_nodes, gpus=Unavailable("no NVIDIA GPU or driver on this machine"))
    assert row.status is Status.SKIP and row.message == "no NVIDIA GPU or driver on this machine"
