"""nvidia.*: facts gathered from fake nvidia-smi / proc / sys trees, judgements from injected facts."""

from __future__ import annotations

import pytest

from envdoctor import Status, Unavailable
from envdoctor.testing import gather, run_check
from envdoctor_checks import nvidia
from tests.fakes import PROC_VERSION_580, fake_nvidia_smi, pci_tree

H200 = {
    "index": 0,
    "name": "NVIDIA H200",
    "uuid": "GPU-8d6ff5c2-1111-2222-3333-444455556666",
    "cc": "9.0",
    "memory_total": 141 << 30,
    "memory_used": 1 << 29,
    "mig_mode": False,
    "mig_devices": [],
    "persistence_mode": True,
    "compute_mode": "Default",
    "brand": "NVIDIA",
    "processes": [],
    "pci_bus_id": "00000000:00:06.0",
}


def gpu(i: int, **kw) -> dict:
    return {**H200, "index": i, "uuid": f"GPU-{i}{i}{i}{i}aaaa-0000", **kw}


DRIVER = {
    "version": "580.65.06",
    "cuda_version": "13.0",
    "cuda_version_source": "cuDriverGetVersion",
    "source": "nvml",
    "kernel_module": "580.65.06",
    "libcuda": {
        "path": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "realpath": "/usr/lib/x86_64-linux-gnu/libcuda.so.580.65.06",
        "version": "580.65.06",
    },
    "libcuda_error": "",
    "libnvidia_ml": {
        "path": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
        "realpath": "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.65.06",
        "version": "580.65.06",
    },
    "nvml_error": "",
}


# ---- facts against real fakes ----------------------------------------------------------------


def test_kernel_module_read_from_proc_and_sys(tmp_path):
    proc = tmp_path / "version"
    proc.write_text(PROC_VERSION_580)
    assert nvidia.read_kernel_module(str(proc), str(tmp_path / "none")) == "580.65.06"
    proc.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n")
    assert nvidia.read_kernel_module(str(proc), str(tmp_path / "none")) == "535.104.05"
    sysv = tmp_path / "sysversion"
    sysv.write_text("570.133.20\n")
    assert nvidia.read_kernel_module(str(tmp_path / "missing"), str(sysv)) == "570.133.20"
    assert nvidia.read_kernel_module(str(tmp_path / "missing"), str(tmp_path / "missing2")) is None


def test_pci_scan_tells_gpus_from_nvswitches_and_other_vendors(tmp_path, monkeypatch):
    root = pci_tree(
        tmp_path / "devices",
        {"0000:18:00.0": ("0x10de", "0x030200"), "0000:05:00.0": ("0x10de", "0x068000"), "0000:00:02.0": ("0x8086", "0x030000")},
    )
    monkeypatch.setattr(nvidia, "PCI_DEVICES", str(root))
    assert [d["address"] for d in gather(nvidia.pci_gpus)] == ["0000:18:00.0"]
    assert [d["address"] for d in gather(nvidia.pci_nvswitches)] == ["0000:05:00.0"]


def test_this_machine_has_no_driver_and_says_so(tmp_path, monkeypatch):
    # Real NVML (nvidia-ml-py finds no libnvidia-ml here), no nvidia-smi on PATH, empty PCI bus.
    monkeypatch.setattr(nvidia, "PROC_VERSION", str(tmp_path / "none"))
    q = gather(nvidia.nvidia_query, env={"PATH": str(tmp_path)})
    assert q["nvml"] is None and q["smi"] is None
    with pytest.raises(Unavailable, match="no NVIDIA GPU or driver on this machine"):
        gather(nvidia.driver, nvidia_query=q, pci_gpus=[])
    with pytest.raises(Unavailable, match="no NVIDIA driver loaded although 1 NVIDIA GPU"):
        gather(nvidia.driver, nvidia_query=q, pci_gpus=[{"address": "0000:18:00.0", "class": "0x030200"}])


def test_fake_nvidia_smi_supplies_driver_and_gpus(tmp_path):
    fake_nvidia_smi(tmp_path / "bin", "h200")
    q = gather(nvidia.nvidia_query, env={"PATH": str(tmp_path / "bin")})
    assert "nvml" in q["errors"] and q["smi"] is not None
    drv = gather(nvidia.driver, nvidia_query=q, pci_gpus=[])
    assert drv["version"] == "580.65.06" and drv["source"] in ("nvidia-smi", "proc")
    # No libcuda here: the driver's CUDA comes from the branch table, and says so.
    assert drv["cuda_version"] == "13.0" and drv["cuda_version_source"] == "driver branch table"
    [g] = gather(nvidia.gpus, nvidia_query=q, driver=drv)
    assert (g["name"], g["cc"], g["memory_total"], g["persistence_mode"]) == ("NVIDIA H200", "9.0", 143771 << 20, True)
    row = run_check(nvidia.gpu_list, gpus=[g])
    assert row.status is Status.PASS and "NVIDIA H200 (CC 9.0)" in row.message


@pytest.mark.slow
def test_hanging_nvidia_smi_times_out_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(nvidia, "NVIDIA_SMI_TIMEOUT", 1.0)
    fake_nvidia_smi(tmp_path / "bin", "hang")
    q = gather(nvidia.nvidia_query, env={"PATH": str(tmp_path / "bin")})
    assert "did not finish within 1s" in q["errors"]["nvidia-smi"]
    with pytest.raises(Unavailable, match="nvidia-smi did not finish within 1s"):
        gather(nvidia.driver, nvidia_query=q, pci_gpus=[])


def test_failing_nvidia_smi_is_reported_with_its_text(tmp_path):
    fake_nvidia_smi(tmp_path / "bin", "fail")
    q = gather(nvidia.nvidia_query, env={"PATH": str(tmp_path / "bin")})
    assert "couldn't communicate with the NVIDIA driver" in q["errors"]["nvidia-smi"]


# ---- CUDA_VISIBLE_DEVICES parsed as CUDA does ---------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, [0, 1, 2]),
        ("", []),
        ("2,0", [2, 0]),
        ("1gpu", [1]),  # strtoul: leading digits count
        ("0,7,1", [0]),  # the invalid 7 ends the list
        ("0,0", []),  # a repeated device leaves none
        ("GPU-1111", [1]),  # a unique UUID prefix
        ("GPU-", []),  # ambiguous prefix: invalid at once
        ("-1,0", []),
        ("MIG-abcd", [2]),
    ],
)
def test_parse_visible(value, expected):
    gs = [gpu(0), gpu(1), gpu(2, mig_mode=True, mig_devices=[{"uuid": "MIG-abcd-ef"}])]
    assert [g["index"] for g in nvidia.parse_visible(value, gs).selected] == expected


def test_visible_gpus_fact_follows_env():
    gs = [gpu(0), gpu(1)]
    assert [g["index"] for g in gather(nvidia.visible_gpus, gpus=gs, env={"CUDA_VISIBLE_DEVICES": "1"})] == [1]
    assert gather(nvidia.visible_gpus, gpus=gs, env={}) == gs


def test_cuda_visible_devices_judgements():
    gs = [gpu(0), gpu(1)]
    empty = run_check(nvidia.cuda_visible_devices, gpus=gs, env_vars={"CUDA_VISIBLE_DEVICES": ""})
    assert empty.status is Status.FAIL and "empty string" in empty.message and "unset CUDA_VISIBLE_DEVICES" in empty.hint
    partial = run_check(nvidia.cuda_visible_devices, gpus=gs, env_vars={"CUDA_VISIBLE_DEVICES": "1,5"})
    assert partial.status is Status.WARN and "'5' is invalid" in partial.message and "only 1 GPU(s) visible" in partial.message
    none = run_check(nvidia.cuda_visible_devices, gpus=gs, env_vars={"CUDA_VISIBLE_DEVICES": "GPU-deadbeef"})
    assert none.status is Status.FAIL and "no GPU has that UUID" in none.message and "nvidia-smi -L" in none.hint
    good = run_check(nvidia.cuda_visible_devices, gpus=gs, env_vars={"CUDA_VISIBLE_DEVICES": "1"})
    assert good.status is Status.PASS and "selects 1 of 2" in good.message
    assert run_check(nvidia.cuda_visible_devices, gpus=gs, env_vars={}).status is Status.PASS
    mixed = [gpu(0, name="NVIDIA A100", cc="8.0"), gpu(1)]
    order = run_check(nvidia.cuda_visible_devices, gpus=mixed, env_vars={"CUDA_VISIBLE_DEVICES": "0"})
    assert order.status is Status.WARN and "CUDA_DEVICE_ORDER=PCI_BUS_ID" in order.hint
    pinned = run_check(nvidia.cuda_visible_devices, gpus=mixed, env_vars={"CUDA_VISIBLE_DEVICES": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert pinned.status is Status.PASS and "NVIDIA A100" in pinned.message
    # No driver: the check skips with the driver's reason instead of blaming the variable.
    nodrv = run_check(
        nvidia.cuda_visible_devices, gpus=Unavailable("no NVIDIA GPU or driver on this machine"), env_vars={"CUDA_VISIBLE_DEVICES": ""}
    )
    assert nodrv.status is Status.SKIP and "no NVIDIA GPU or driver" in nodrv.message


# ---- judgements --------------------------------------------------------------------------------


def test_driver_check():
    row = run_check(nvidia.driver_present, driver=DRIVER, pci_gpus=[])
    assert row.status is Status.PASS and "580.65.06" in row.message and "CUDA 13.0" in row.message
    missing = Unavailable("no NVIDIA driver loaded")
    pci = [{"address": "0000:18:00.0", "class": "0x030200"}]
    bare = run_check(nvidia.driver_present, driver=missing, pci_gpus=pci, container={"in_container": False})
    assert bare.status is Status.FAIL and "no NVIDIA driver is loaded" in bare.message and "modprobe nvidia" in bare.hint
    boxed = run_check(nvidia.driver_present, driver=missing, pci_gpus=pci, container={"in_container": True})
    assert boxed.status is Status.FAIL and "--gpus all" in boxed.hint
    none = run_check(nvidia.driver_present, driver=missing, pci_gpus=[])
    assert none.status is Status.SKIP and none.message == "no NVIDIA GPU on this machine"


def test_driver_library_mismatch():
    assert run_check(nvidia.driver_library_mismatch, driver=DRIVER).status is Status.PASS
    upgraded = {**DRIVER, "kernel_module": "570.133.20", "nvml_error": "RM has detected an NVML/RM version mismatch."}
    row = run_check(nvidia.driver_library_mismatch, driver=upgraded)
    assert row.status is Status.FAIL and "kernel module 570.133.20" in row.message and "libnvidia-ml 580.65.06" in row.message
    assert "reboot" in row.hint


def test_mig():
    assert run_check(nvidia.mig, gpus=[gpu(0)], env={}).status is Status.PASS
    sliced = [gpu(0, mig_mode=True, mig_devices=[{"uuid": "MIG-a"}, {"uuid": "MIG-b"}])]
    row = run_check(nvidia.mig, gpus=sliced, env={})
    assert row.status is Status.WARN and "one MIG instance" in row.message and "CUDA_VISIBLE_DEVICES=MIG-" in row.hint
    assert run_check(nvidia.mig, gpus=sliced, env={"CUDA_VISIBLE_DEVICES": "MIG-a"}).status is Status.PASS
    bare = run_check(nvidia.mig, gpus=[gpu(0, mig_mode=True, mig_devices=[])], env={})
    assert bare.status is Status.FAIL and "no MIG instance" in bare.message


def test_compute_mode_and_persistence():
    assert run_check(nvidia.compute_mode, gpus=[gpu(0)]).status is Status.PASS
    prohibited = run_check(nvidia.compute_mode, gpus=[gpu(0, compute_mode="Prohibited")])
    assert prohibited.status is Status.FAIL and "Prohibited" in prohibited.message and "-c DEFAULT" in prohibited.hint
    busy = run_check(
        nvidia.compute_mode, gpus=[gpu(0, compute_mode="Exclusive_Process", processes=[{"pid": 999999, "used_memory": 1 << 30}])]
    )
    assert busy.status is Status.FAIL and "999999" in busy.message
    # Persistence is information: never a warning the user cannot act on.
    off = run_check(nvidia.persistence, gpus=[gpu(0, persistence_mode=False)])
    assert off.status is Status.PASS and "nvidia-smi -pm 1" in off.message


SMI_Q = """
==============NVSMI LOG==============

Driver Version                            : 580.65.06
Attached GPUs                             : 2
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Fabric
        State                             : In Progress
        Status                            : N/A
        CliqueId                          : 0
    Compute Mode                          : Default
GPU 00000000:2A:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Fabric
        State                             : Completed
        Status                            : Success
"""


def test_fabric_manager_reads_nvidia_smi_q(tmp_path):
    fabric = nvidia.parse_smi_fabric(SMI_Q)
    assert fabric == {
        "00000000:18:00.0": {"state": "In Progress", "status": "N/A"},
        "00000000:2a:00.0": {"state": "Completed", "status": "Success"},
    }
    gs = [gpu(0, pci_bus_id="00000000:18:00.0"), gpu(1, pci_bus_id="00000000:2A:00.0")]
    row = run_check(nvidia.fabric_manager, gpus=gs, fabric_state=fabric)
    assert row.status is Status.FAIL and "error 802" in row.message and "nvidia-fabricmanager" in row.hint
    done = nvidia.parse_smi_fabric(SMI_Q.replace("In Progress", "Completed").replace("N/A", "Success"))
    assert run_check(nvidia.fabric_manager, gpus=gs, fabric_state=done).status is Status.PASS
    # One H200, no NVSwitch: nothing is run and the check skips with the reason.
    with pytest.raises(Unavailable, match="no NVSwitch"):
        gather(nvidia.fabric_state, env={"PATH": str(tmp_path)}, gpus=[gpu(0)], pci_nvswitches=[])
    assert (
        run_check(nvidia.fabric_manager, gpus=[gpu(0)], fabric_state=Unavailable("no NVSwitch fabric on this machine")).status
        is Status.SKIP
    )


def test_gpu_processes():
    assert run_check(nvidia.gpu_processes, gpus=[gpu(0)]).status is Status.PASS
    small = [gpu(0, processes=[{"pid": 999998, "used_memory": 1 << 30}])]
    assert run_check(nvidia.gpu_processes, gpus=small).status is Status.PASS
    big = [gpu(0, processes=[{"pid": 999998, "used_memory": 80 << 30}])]
    row = run_check(nvidia.gpu_processes, gpus=big)
    assert (
        row.status is Status.WARN and "999998" in row.message and "80 GiB" in row.message and "nvidia-smi --query-compute-apps" in row.hint
    )
    assert run_check(nvidia.gpu_processes, gpus=[gpu(0, processes=None)]).status is Status.SKIP


def test_forward_compat():
    assert run_check(nvidia.forward_compat, driver=DRIVER, gpus=[gpu(0)]).status is Status.PASS
    compat_lib = {
        "path": "/usr/local/cuda/compat/libcuda.so.1",
        "realpath": "/usr/local/cuda-13.0/compat/libcuda.so.580.65.06",
        "version": "580.65.06",
    }
    old_host = {**DRIVER, "version": "570.133.20", "kernel_module": "570.133.20", "libcuda": compat_lib}
    rtx = [gpu(0, name="NVIDIA GeForce RTX 4090", brand="GeForce")]
    row = run_check(nvidia.forward_compat, driver=old_host, gpus=rtx)
    assert row.status is Status.FAIL and "error 804" in row.message and "LD_LIBRARY_PATH" in row.hint
    assert run_check(nvidia.forward_compat, driver=old_host, gpus=[gpu(0)]).status is Status.PASS


def test_p2p_consumer(monkeypatch, tmp_path):
    monkeypatch.setattr(nvidia, "IOMMU_GROUPS", str(tmp_path))
    assert run_check(nvidia.p2p_consumer, gpus=[gpu(0)], env={}).status is Status.SKIP
    rtx = [gpu(i, name="NVIDIA GeForce RTX 4090", brand="GeForce") for i in range(2)]
    row = run_check(nvidia.p2p_consumer, gpus=rtx, env={}, nvidia_query={"nvml": {"p2p_read": "status 2"}})
    assert row.status is Status.WARN and "NCCL_P2P_DISABLE=1" in row.hint
    assert run_check(nvidia.p2p_consumer, gpus=rtx, env={"NCCL_P2P_DISABLE": "1"}).status is Status.PASS
    assert run_check(nvidia.p2p_consumer, gpus=[gpu(0), gpu(1)], env={}).status is Status.SKIP
