"""_gpu_health: verdicts from NVML-shaped values and Xid events, and the pynvml gatherer against a fake NVML.

GPU values are the ones users posted from ``nvidia-smi -q`` where we have them: an A100 with
"Remapped Rows: Uncorrectable Error 4, Pending Yes" (leptonai/gpud#80), an idle GPU whose only
clock event reason is "Idle: Active" (kubeflow/kubeflow#68), and the V100 node of
NVIDIA/gpu-operator#1146 whose Xid 48/64 lines are in tests/fixtures/xid.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from envdoctor import Status
from envdoctor_checks import _gpu_health as gh
from envdoctor_checks._xid import KernelLog, Remedy, parse_line, parse_lines

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "xid"
BOOT_LOG = KernelLog("/dev/kmsg")


def xids(name: str):
    return tuple(parse_lines((FIXTURES / name).read_text().splitlines()))


def h100(index: int = 0, **kw) -> dict:
    """A healthy H100 SXM as gather_health reports it."""
    gpu = {
        "index": index,
        "name": "NVIDIA H100 80GB HBM3",
        "uuid": f"GPU-{index:08d}-aaaa",
        "pci_bus_id": f"00000000:{0x18 + index:02X}:00.0",
        "ecc_mode": {"current": 1, "pending": 1},
        "ecc": {"volatile": {"corrected": 0, "uncorrected": 0}, "aggregate": {"corrected": 0, "uncorrected": 0}},
        "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0},
        "recovery_action": 0,
        "pcie": {"gen": 5, "width": 16, "max_gen": 5, "max_width": 16},
        "utilization_gpu": 0,
        "nvlink": {"active": list(range(18)), "inactive": []},
        "clocks_event_reasons": 0x1,
        "unsupported": {"retired_pages": gh.NOT_SUPPORTED},
        "errors": {},
    }
    gpu.update(kw)
    return gpu


# ---- clock event reasons and NVML constants, checked against nvidia-ml-py itself ------------


def test_clock_reason_bits_are_pynvmls():
    pynvml = pytest.importorskip("pynvml")
    names = {
        0x1: "GpuIdle", 0x2: "ApplicationsClocksSetting", 0x4: "SwPowerCap", 0x8: "HwSlowdown", 0x10: "SyncBoost",
        0x20: "SwThermalSlowdown", 0x40: "HwThermalSlowdown", 0x80: "HwPowerBrakeSlowdown", 0x100: "DisplayClockSetting",
    }  # fmt: skip
    for bit, name in names.items():
        assert getattr(pynvml, f"nvmlClocksEventReason{name}") == bit
    assert pynvml.nvmlClocksThrottleReasonBoardLimit == 0x200 and pynvml.nvmlClocksThrottleReasonReliability == 0x400
    assert [bit for bit, _ in gh.CLOCK_REASONS] == sorted([*names, 0x200, 0x400])


def test_recovery_actions_are_pynvmls():
    pynvml = pytest.importorskip("pynvml")
    assert gh.FI_GPU_RECOVERY_ACTION == pynvml.NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
    assert (gh.FI_RESET_STATUS, gh.FI_DRAIN_AND_RESET_STATUS) == (
        pynvml.NVML_FI_DEV_RESET_STATUS,
        pynvml.NVML_FI_DEV_DRAIN_AND_RESET_STATUS,
    )
    for name, value in [("NONE", 0), ("GPU_RESET", 1), ("NODE_REBOOT", 2), ("DRAIN_P2P", 3), ("DRAIN_AND_RESET", 4)]:
        assert getattr(pynvml, f"NVML_GPU_RECOVERY_ACTION_{name}") == value and value in gh.RECOVERY_ACTIONS
    assert (gh.NVML_GPU_IS_LOST, gh.NVML_RESET_REQUIRED) == (pynvml.NVML_ERROR_GPU_IS_LOST, pynvml.NVML_ERROR_RESET_REQUIRED)


def test_decode_clock_reasons():
    assert gh.decode_clock_reasons(0) == []
    assert gh.decode_clock_reasons(0x1) == ["GPU idle"]
    assert gh.decode_clock_reasons(0x4 | 0x40) == ["SW power cap", "HW thermal slowdown"]
    assert gh.decode_clock_reasons(0x10000) == ["unknown 0x10000"]


# ---- one topic at a time ---------------------------------------------------------------------


def test_uncorrectable_ecc_since_the_driver_loaded_fails():
    f = gh.judge_ecc(h100(ecc={"volatile": {"corrected": 0, "uncorrected": 2}, "aggregate": {"corrected": 0, "uncorrected": 2}}))
    assert (f.status, f.hardware, f.remedy) == (Status.FAIL, True, Remedy.RESET)
    assert f.message == "2 uncorrectable ECC errors since the driver loaded"


def test_lifetime_only_uncorrectable_ecc_is_a_trend_not_a_verdict():
    f = gh.judge_ecc(h100(ecc={"volatile": {"corrected": 0, "uncorrected": 0}, "aggregate": {"corrected": 40, "uncorrected": 3}}))
    assert (f.status, f.hardware) == (Status.WARN, False)
    assert "3 uncorrectable ECC errors in the GPU's lifetime" in f.message


def test_ecc_clean_off_and_unsupported():
    assert gh.judge_ecc(h100()).message == "ECC clean"
    assert gh.judge_ecc(h100(ecc_mode={"current": 0, "pending": 0})).message.startswith("ECC off")
    geforce = {"index": 0, "unsupported": {"ecc": gh.NOT_SUPPORTED}, "errors": {}}
    f = gh.judge_ecc(geforce)
    assert (f.status, f.message) == (Status.SKIP, "ECC not supported on this GPU")


def test_row_remap_pending_failed_and_done():
    # nvidia-smi -q: Remapped Rows / Correctable Error 0 / Uncorrectable Error 4 / Pending Yes
    pending = gh.judge_remapped_rows(h100(remapped_rows={"correctable": 0, "uncorrectable": 4, "pending": 1, "failure": 0}))
    assert (pending.status, pending.remedy, pending.hardware) == (Status.WARN, Remedy.RESET, True)
    failed = gh.judge_remapped_rows(h100(remapped_rows={"correctable": 0, "uncorrectable": 8, "pending": 0, "failure": 1}))
    assert (failed.status, failed.remedy) == (Status.FAIL, Remedy.REPLACE)
    done = gh.judge_remapped_rows(h100(remapped_rows={"correctable": 1, "uncorrectable": 4, "pending": 0, "failure": 0}))
    assert (done.status, done.message) == (Status.PASS, "4 rows remapped, none pending")
    assert gh.judge_remapped_rows({"unsupported": {"remapped_rows": gh.NOT_SUPPORTED}}) is None


def test_retired_pages_pending_needs_a_reset():
    f = gh.judge_retired_pages({"retired_pages": {"sbe": 0, "dbe": 1, "pending": 1}})
    assert (f.status, f.remedy, f.hardware) == (Status.WARN, Remedy.RESET, True)
    assert gh.judge_retired_pages({"retired_pages": {"sbe": 2, "dbe": 1, "pending": 0}}).message == "3 retired pages, none pending"


@pytest.mark.parametrize(
    ("value", "status", "remedy", "words"),
    [
        (0, Status.PASS, Remedy.NONE, "no recovery pending"),
        (1, Status.FAIL, Remedy.RESET, "GPU reset required"),
        (2, Status.FAIL, Remedy.REBOOT, "node reboot required"),
        (3, Status.FAIL, Remedy.RESET, "drain peer-to-peer"),
        (4, Status.FAIL, Remedy.RESET, "drain and reset"),
        (7, Status.FAIL, Remedy.REBOOT, "system reboot required"),
        (42, Status.FAIL, Remedy.RESET, "unknown recovery action 42"),
    ],
)
def test_recovery_action(value, status, remedy, words):
    f = gh.judge_recovery_action(h100(recovery_action=value))
    assert (f.status, f.remedy) == (status, remedy) and words in f.message


def test_recovery_flags_of_older_drivers():
    gpu = h100(reset_status={"reset_required": True, "drain_and_reset": False})
    del gpu["recovery_action"]
    assert gh.judge_recovery_action(gpu).message == "driver reports GPU reset required"
    gpu["reset_status"] = {"reset_required": False, "drain_and_reset": False}
    assert gh.judge_recovery_action(gpu).status is Status.PASS


def test_nvml_saying_the_gpu_is_lost_is_the_verdict():
    gpu = {"index": 2, "errors": {"ecc": {"code": 15, "text": "GPU is lost"}}, "unsupported": {}}
    f = gh.judge_nvml_errors(gpu)
    assert (f.status, f.remedy, f.hardware) == (Status.FAIL, Remedy.REBOOT, True)


def test_pcie_downshift_means_nothing_at_idle_and_something_under_load():
    idle = gh.judge_pcie(h100(pcie={"gen": 1, "width": 16, "max_gen": 5, "max_width": 16}, utilization_gpu=0))
    assert idle.status is Status.PASS and "meaningful only under load" in idle.message
    busy = gh.judge_pcie(h100(pcie={"gen": 5, "width": 8, "max_gen": 5, "max_width": 16}, utilization_gpu=97))
    assert (busy.status, busy.hardware) == (Status.WARN, True)
    assert busy.message == "PCIe Gen5 x8 of Gen5 x16 under load (97% busy)"
    assert gh.judge_pcie(h100()).message == "PCIe Gen5 x16"


def test_nvlink_links_down():
    f = gh.judge_nvlink(h100(nvlink={"active": [0, 1, 2, 4], "inactive": [3, 5]}))
    assert (f.status, f.hardware, f.message) == (Status.WARN, True, "NVLink 4/6 up (down: 3, 5)")
    assert gh.judge_nvlink(h100()).message == "NVLink 18/18 up"
    alone = h100(nvlink={"active": [], "inactive": [0, 1, 2, 3]})
    assert gh.judge_nvlink(alone).status is Status.PASS  # a PCIe card without a bridge
    assert gh.judge_nvlink(alone, peers_have_links=True).status is Status.WARN


def test_clock_reasons_that_mean_cooling_or_power():
    assert gh.judge_clocks(h100()).message == "clocks: GPU idle"  # nvidia-smi -q: Idle: Active
    hot = gh.judge_clocks(h100(clocks_event_reasons=0x4 | 0x40))
    assert (hot.status, hot.hardware, hot.message) == (Status.WARN, True, "clocks cut by HW thermal slowdown")
    assert gh.judge_clocks(h100(clocks_event_reasons=0x4)).status is Status.PASS  # at the power limit: normal


def test_since_boot_text():
    assert [gh.since_boot_text(s) for s in (45, 125, 7200, 7500)] == ["boot+45s", "boot+2m", "boot+2h", "boot+2h05m"]


# ---- the per-GPU sentence --------------------------------------------------------------------


def test_hardware_evidence_sentence():
    fell = parse_line("[ 7210.000001] NVRM: Xid (PCI:0000:1b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    gpu = h100(3, ecc={"volatile": {"corrected": 0, "uncorrected": 2}, "aggregate": {"corrected": 0, "uncorrected": 2}})
    (ev,) = gh.summarize({"gpus": [gpu]}, KernelLog("/dev/kmsg", (fell,)))
    assert ev.line == (
        "GPU 3: 2 uncorrectable ECC errors since the driver loaded, Xid 79 (GPU has fallen off the bus) at boot+2h: "
        "reboot the machine, and replace the GPU / contact the provider if it happens again; the software is not the cause"
    )
    assert ev.status is Status.FAIL and ev.hardware_fault
    assert ev.to_item().name == "GPU 3" and ev.to_item().status is Status.FAIL


def test_clean_gpu_sentence():
    ev = gh.summarize_gpu("GPU 0", h100(), (), BOOT_LOG)
    assert ev.line == "GPU 0: no hardware evidence (ECC clean, no Xid since boot, no pending remap)"
    assert ev.status is Status.PASS and not ev.hardware_fault


def test_real_v100_dbe_and_failed_retirement_map_to_its_gpu():
    # NVIDIA/gpu-operator#1146: Xid 48 then Xid 64 on PCI 0000:07:00.
    v100 = h100(0, name="Tesla V100-SXM2-32GB", pci_bus_id="00000000:07:00.0", remapped_rows=None,
                retired_pages={"sbe": 0, "dbe": 1, "pending": 1}, unsupported={"remapped_rows": gh.NOT_SUPPORTED})  # fmt: skip
    del v100["remapped_rows"], v100["recovery_action"]
    other = h100(1, pci_bus_id="00000000:0A:00.0")
    log = KernelLog("journalctl", xids("gpu-operator-1146.log"))
    ev0, ev1 = gh.summarize({"gpus": [v100, other]}, log)
    assert ev0.status is Status.FAIL and ev0.hardware_fault
    assert "Xid 48 (double-bit ECC error) at boot+3m" in ev0.line and "Xid 64" in ev0.line
    assert "replace the GPU / contact the provider; the software is not the cause" in ev0.line
    assert ev1.line.startswith("GPU 1: no hardware evidence")


def test_an_xid_for_a_gpu_nvml_no_longer_lists():
    # open-gpu-kernel-modules#1151: after Xid 79 the GPU at 0000:2b:00 is gone from NVML.
    log = KernelLog("journalctl", xids("open-gpu-kernel-modules-1151.log"))
    ev0, gone = gh.summarize({"gpus": [h100(0)]}, log)
    assert ev0.status is Status.PASS
    assert gone.label == "GPU at PCI 0000:2b:00 (not listed by NVML)" and gone.status is Status.FAIL
    assert "Xid 79 (GPU has fallen off the bus) at May 18 19:02:39: reboot the machine" in gone.line


def test_application_xids_are_not_the_machine():
    # pytorch/pytorch#51382: Xid 43 then Xid 31 (illegal memory access) on two GPUs.
    gpus = [h100(0, pci_bus_id="00000000:3D:00.0"), h100(1, pci_bus_id="00000000:DB:00.0")]
    ev0, ev1 = gh.summarize({"gpus": gpus}, KernelLog("dmesg", xids("pytorch-51382.log")))
    assert ev0.status is Status.PASS and not ev0.hardware_fault
    assert ev1.line == (
        "GPU 1: no hardware evidence (ECC clean, no pending remap); "
        "Xid 31 (GPU memory page fault) ×3 at Fri Jan 29 23:42:34 2021: an application bug, not the machine"
    )


def test_driver_xids_need_a_reset_but_blame_the_driver():
    # NVIDIA/nvidia-docker#1648: Xid 119 GSP RPC timeouts.
    (ev,) = gh.summarize({"gpus": [h100(0, pci_bus_id="00000000:61:00.0")]}, KernelLog("dmesg", xids("nvidia-docker-1648.log")))
    assert ev.status is Status.FAIL and not ev.hardware_fault
    assert "Xid 119 (GSP RPC timeout) ×5" in ev.line and "the driver or its firmware is at fault" in ev.line


def test_nonfatal_nvlink5_is_informational():
    fatal, nonfatal = xids("gpud-1174.log")
    ev = gh.summarize_gpu("GPU 0", h100(), (nonfatal,), BOOT_LOG)
    assert ev.status is Status.PASS and "informational" in ev.line
    ev = gh.summarize_gpu("GPU 0", h100(), (fatal,), BOOT_LOG)
    assert ev.status is Status.FAIL and ev.hardware_fault


def test_unreadable_log_is_said_not_hidden():
    log = KernelLog("", reason="not root: the kernel log is not readable (/dev/kmsg: Operation not permitted)")
    ev = gh.summarize_gpu("GPU 0", h100(), (), log)
    assert ev.status is Status.PASS
    assert "Xid not checked: not root: the kernel log is not readable" in ev.line


def test_truncated_ring_buffer_does_not_claim_since_boot():
    ev = gh.summarize_gpu("GPU 0", h100(), (), KernelLog("dmesg", complete=False))
    assert "no Xid in the kernel log (early boot records dropped)" in ev.line


def test_evidence_is_json_ready():
    (ev,) = gh.summarize({"gpus": [h100()]}, BOOT_LOG)
    assert json.loads(json.dumps(ev.to_dict()))["status"] == "pass"


# ---- gather_health against a fake pynvml -----------------------------------------------------


class NVMLError(Exception):
    def __init__(self, value: int) -> None:
        super().__init__(value)
        self.value = value

    def __str__(self) -> str:
        return {3: "Not Supported", 13: "Function Not Found", 15: "GPU is lost"}.get(self.value, f"error {self.value}")


def field(ret: int, value: int = 0):
    return SimpleNamespace(nvmlReturn=ret, valueType=1, value=SimpleNamespace(uiVal=value))


class FakeNVML:
    """The slice of pynvml gather_health uses. GPU 0: an H100 with a pending row remap (values
    from leptonai/gpud#80). GPU 1: a GeForce that supports none of the datacenter queries."""

    NVMLError = NVMLError
    NVML_SUCCESS, NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_FUNCTION_NOT_FOUND = 0, 3, 13
    NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC = 0, 1
    NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 0, 1
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 0, 1
    NVML_NVLINK_MAX_LINKS = 36

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.shut = False

    def _only_h100(self, h):
        if h == "geforce":
            raise NVMLError(3)

    def nvmlInit(self):
        self.calls.append("init")

    def nvmlShutdown(self):
        self.shut = True

    def nvmlDeviceGetCount(self):
        return 2

    def nvmlDeviceGetHandleByIndex(self, i):
        return ("h100", "geforce")[i]

    def nvmlDeviceGetName(self, h):
        return b"NVIDIA H100 80GB HBM3" if h == "h100" else "NVIDIA GeForce RTX 3090"

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-{h}"

    def nvmlDeviceGetPciInfo(self, h):
        return SimpleNamespace(busId=b"00000000:3B:00.0" if h == "h100" else "00000000:01:00.0")

    def nvmlDeviceGetEccMode(self, h):
        self._only_h100(h)
        return [1, 1]

    def nvmlDeviceGetTotalEccErrors(self, h, err, counter):
        return {(1, 0): 0, (1, 1): 4, (0, 0): 0, (0, 1): 12}[(err, counter)]

    def nvmlDeviceGetRemappedRows(self, h):
        self._only_h100(h)
        return (0, 4, 1, 0)

    def nvmlDeviceGetRetiredPages(self, h, cause):
        raise NVMLError(3)  # Ampere and later remap rows instead

    def nvmlDeviceGetRetiredPagesPendingStatus(self, h):
        raise NVMLError(3)

    def nvmlDeviceGetFieldValues(self, h, ids):
        if h == "geforce":
            return [field(3) for _ in ids]
        return [field(0, {230: 1, 226: 1, 227: 0}[i]) for i in ids]

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        return 1

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        return 16

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h):
        return 5 if h == "h100" else 4

    def nvmlDeviceGetMaxPcieLinkWidth(self, h):
        return 16

    def nvmlDeviceGetUtilizationRates(self, h):
        return SimpleNamespace(gpu=0, memory=0)

    def nvmlDeviceGetNvLinkState(self, h, link):
        self._only_h100(h)
        if link >= 18:
            raise NVMLError(2)
        return 0 if link == 7 else 1

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        self._only_h100(h)
        return 0x1

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h):
        return 0x4


def test_gather_health_reads_each_field_and_names_what_is_unsupported():
    nvml = FakeNVML()
    health = gh.gather_health(nvml=nvml)
    assert nvml.shut and json.loads(json.dumps(health)) == health
    h100_, geforce = health["gpus"]
    assert h100_["name"] == "NVIDIA H100 80GB HBM3" and h100_["pci_bus_id"] == "00000000:3B:00.0"
    assert h100_["ecc"] == {"volatile": {"corrected": 0, "uncorrected": 0}, "aggregate": {"corrected": 12, "uncorrected": 4}}
    assert h100_["remapped_rows"] == {"correctable": 0, "uncorrectable": 4, "pending": 1, "failure": 0}
    assert h100_["recovery_action"] == 1 and h100_["clocks_event_reasons"] == 0x1
    assert h100_["nvlink"] == {"active": [i for i in range(18) if i != 7], "inactive": [7]}
    assert "retired_pages" not in h100_ and h100_["unsupported"] == {"retired_pages": gh.NOT_SUPPORTED}
    for key in ("ecc", "remapped_rows", "recovery_action", "nvlink", "retired_pages"):
        assert key not in geforce and geforce["unsupported"][key] == gh.NOT_SUPPORTED
    assert geforce["clocks_event_reasons"] == 0x4  # fell back to the pre-535 throttle-reasons call
    assert geforce["pcie"] == {"gen": 1, "width": 16, "max_gen": 4, "max_width": 16}


def test_gathered_values_feed_the_verdicts():
    (ev0, ev1) = gh.summarize(gh.gather_health(nvml=FakeNVML()), BOOT_LOG)
    assert ev0.status is Status.FAIL and ev0.hardware_fault
    assert ev0.line.startswith("GPU 0: driver reports GPU reset required, row remap pending, NVLink 17/18 up (down: 7):")
    assert ev1.line == "GPU 1: no hardware evidence (ECC not supported on this GPU, no Xid since boot)"


def test_handle_count_limits_the_gpus_read():
    assert [g["index"] for g in gh.gather_health(1, nvml=FakeNVML())["gpus"]] == [0]


def test_nvml_that_cannot_start_is_data_not_an_exception():
    class NoDriver(FakeNVML):
        def nvmlInit(self):
            raise NVMLError(9)

    assert gh.gather_health(nvml=NoDriver()) == {"gpus": [], "error": "NVML could not start: error 9"}


def test_a_lost_gpu_is_recorded_with_nvmls_code():
    class Lost(FakeNVML):
        def nvmlDeviceGetEccMode(self, h):
            raise NVMLError(15)

    gpu = gh.gather_health(1, nvml=Lost())["gpus"][0]
    assert gpu["errors"]["ecc"] == {"code": 15, "text": "GPU is lost"}
    assert gh.judge_nvml_errors(gpu).message == "NVML reports the GPU is lost"


def test_importing_the_module_loads_no_nvml():
    code = "import sys, envdoctor_checks._gpu_health, envdoctor_checks._xid; print('pynvml' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_gather_health_on_this_machine_returns_data():
    health = gh.gather_health()
    assert isinstance(health["gpus"], list) and json.dumps(health)
    assert health["gpus"] or health["error"].startswith("NVML could not")


def test_an_h200_as_nvml_reported_it_on_the_gpu_machine():
    # Read with nvidia-ml-py on an H200 (driver 580.159.04): ECC mode [1, 1], every ECC counter 0,
    # remapped rows (0, 0, 0, 0), retired pages "Not Supported" (Hopper remaps rows instead), field
    # values 230/226/227 all 0, NVLink links 0-17 active and 18-35 "Invalid Argument", PCIe Gen5 x16
    # of Gen5 x16, clock event reasons 0x1 idle and 0x0 at 31% load.
    h200 = h100(0, name="NVIDIA H200", pci_bus_id="00000000:00:06.0", utilization_gpu=31, clocks_event_reasons=0x0)
    (ev,) = gh.summarize({"gpus": [h200]}, KernelLog("/dev/kmsg"))
    assert ev.line == "GPU 0: no hardware evidence (ECC clean, no Xid since boot, no pending remap)"
    assert {f.topic: f.message for f in ev.findings}["clocks"] == "clocks not throttled"


def test_a_single_fault_gets_its_own_advice():
    (fell,) = xids("open-gpu-kernel-modules-1151.log")
    ev = gh.summarize_gpu("GPU 0", h100(), (fell,), BOOT_LOG)
    assert "reboot the machine (power it off fully if the GPU stays missing)" in ev.line


def test_an_xid_the_table_does_not_know_is_shown_not_dropped():
    odd = parse_line("[  12.5] NVRM: Xid (PCI:0000:18:00): 199, something new")
    ev = gh.summarize_gpu("GPU 0", h100(), (odd,), BOOT_LOG)
    assert ev.status is Status.WARN and "Xid 199 (not in envdoctor's table) at boot+12s: look it up" in ev.line
