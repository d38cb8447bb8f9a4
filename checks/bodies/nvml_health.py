"""GPU health values read from NVML, for the contained NVML child (``nvml_child.py --health``).

Standard library and pynvml only, no envdoctor: the child runs this file's directory as its
``sys.path[0]`` and imports it as a sibling, and the doctor imports it (as
``envdoctor_checks.bodies.nvml_health``) only for the names, never to call NVML itself. The
judgements over these values are ``envdoctor_checks._gpu_health``.

Sources: nvidia-ml-py's ``pynvml.py`` (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION = 230, the older
reset-status fields 226/227, nvmlDeviceGetCurrentClocksEventReasons and its pre-535 name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

NOT_SUPPORTED = "not supported on this GPU"
NOT_IN_DRIVER = "not supported by this driver"
FI_GPU_RECOVERY_ACTION = 230  # NVML_FI_DEV_GET_GPU_RECOVERY_ACTION; absent from older nvidia-ml-py
FI_RESET_STATUS, FI_DRAIN_AND_RESET_STATUS = 226, 227  # what drivers before the recovery action had


class _Reader:
    """Reads one NVML value at a time so that one unsupported query loses only that field."""

    def __init__(self, nvml: Any) -> None:
        self.nvml = nvml
        self.unsupported: dict[str, str] = {}
        self.errors: dict[str, dict[str, Any]] = {}

    def get(self, key: str, fn: str | Callable[..., Any], *args: Any) -> Any:
        """fn(*args), fn being an nvml function name or a callable; None when NVML says no."""
        call = getattr(self.nvml, fn, None) if isinstance(fn, str) else fn
        if call is None:
            self.unsupported[key] = f"not available in this nvidia-ml-py ({fn})"
            return None
        try:
            return call(*args)
        except self.nvml.NVMLError as e:
            self.record(key, e)
            return None

    def record(self, key: str, error: Any) -> None:
        code = getattr(error, "value", None)
        if code == self.nvml.NVML_ERROR_NOT_SUPPORTED:
            self.unsupported[key] = NOT_SUPPORTED
        elif code == getattr(self.nvml, "NVML_ERROR_FUNCTION_NOT_FOUND", 13):
            self.unsupported[key] = NOT_IN_DRIVER
        else:
            self.errors[key] = {"code": code, "text": str(error)}


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _field_values(nvml: Any, handle: Any, ids: Sequence[int]) -> list[int | None]:
    """nvmlDeviceGetFieldValues, each value or None where NVML answered that field with an error."""
    values = nvml.nvmlDeviceGetFieldValues(handle, list(ids))
    members = ("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal", "usVal")  # by nvmlValueType_t
    out: list[int | None] = []
    for v in values:
        ok = v.nvmlReturn == nvml.NVML_SUCCESS and 0 <= v.valueType < len(members)
        out.append(int(getattr(v.value, members[v.valueType])) if ok else None)
    return out


def _read_ecc(r: _Reader, h: Any) -> dict[str, Any]:
    nvml = r.nvml
    out: dict[str, Any] = {}
    mode = r.get("ecc", "nvmlDeviceGetEccMode", h)
    if mode is None:
        return out
    out["ecc_mode"] = {"current": int(mode[0]), "pending": int(mode[1])}
    counts: dict[str, dict[str, int]] = {}
    for scope, counter in (("volatile", nvml.NVML_VOLATILE_ECC), ("aggregate", nvml.NVML_AGGREGATE_ECC)):
        for kind, err in (("corrected", nvml.NVML_MEMORY_ERROR_TYPE_CORRECTED), ("uncorrected", nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)):
            value = r.get("ecc", "nvmlDeviceGetTotalEccErrors", h, err, counter)
            if value is not None:
                counts.setdefault(scope, {})[kind] = int(value)
    if counts:
        out["ecc"] = counts
    return out


def _read_memory_repair(r: _Reader, h: Any) -> dict[str, Any]:
    nvml, out = r.nvml, {}
    rows = r.get("remapped_rows", "nvmlDeviceGetRemappedRows", h)
    if rows is not None:
        corr, unc, pending, failure = (int(x) for x in rows)
        out["remapped_rows"] = {"correctable": corr, "uncorrectable": unc, "pending": pending, "failure": failure}
    sbe = r.get("retired_pages", "nvmlDeviceGetRetiredPages", h, nvml.NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS)
    dbe = r.get("retired_pages", "nvmlDeviceGetRetiredPages", h, nvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR)
    pending_pages = r.get("retired_pages", "nvmlDeviceGetRetiredPagesPendingStatus", h)
    if sbe is not None or dbe is not None or pending_pages is not None:
        out["retired_pages"] = {"sbe": len(sbe or ()), "dbe": len(dbe or ()), "pending": int(pending_pages or 0)}
    return out


def _read_recovery(r: _Reader, h: Any) -> dict[str, Any]:
    field = getattr(r.nvml, "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION", FI_GPU_RECOVERY_ACTION)
    values = r.get("recovery_action", _field_values, r.nvml, h, [field, FI_RESET_STATUS, FI_DRAIN_AND_RESET_STATUS])
    if values is None:
        return {}
    action, reset, drain = values
    if action is not None:
        return {"recovery_action": action}
    if reset is None and drain is None:
        r.unsupported["recovery_action"] = NOT_SUPPORTED
        return {}
    # Drivers from before the recovery action report the two flags it replaced.
    return {"reset_status": {"reset_required": bool(reset), "drain_and_reset": bool(drain)}}


def _read_pcie(r: _Reader, h: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    pcie = {
        "gen": r.get("pcie", "nvmlDeviceGetCurrPcieLinkGeneration", h),
        "width": r.get("pcie", "nvmlDeviceGetCurrPcieLinkWidth", h),
        "max_gen": r.get("pcie", "nvmlDeviceGetMaxPcieLinkGeneration", h),
        "max_width": r.get("pcie", "nvmlDeviceGetMaxPcieLinkWidth", h),
    }
    if any(v is not None for v in pcie.values()):
        out["pcie"] = pcie
    util = r.get("utilization", "nvmlDeviceGetUtilizationRates", h)
    if util is not None:
        out["utilization_gpu"] = int(util.gpu)
    return out


def _read_nvlink(r: _Reader, h: Any) -> dict[str, Any]:
    active: list[int] = []
    inactive: list[int] = []
    for link in range(getattr(r.nvml, "NVML_NVLINK_MAX_LINKS", 18)):
        try:
            state = r.nvml.nvmlDeviceGetNvLinkState(h, link)
        except r.nvml.NVMLError as e:
            if link == 0:
                r.record("nvlink", e)  # no NVLink on this GPU (or NVML cannot say)
                break
            continue  # links past the GPU's count answer "invalid argument"
        (active if state else inactive).append(link)
    return {"nvlink": {"active": active, "inactive": inactive}} if active or inactive else {}


def _read_clocks(r: _Reader, h: Any) -> dict[str, Any]:
    mask = r.get("clocks_event_reasons", "nvmlDeviceGetCurrentClocksEventReasons", h)
    if mask is None and "clocks_event_reasons" in r.unsupported:
        r.unsupported.pop("clocks_event_reasons")  # drivers before 535 only have the older name
        mask = r.get("clocks_event_reasons", "nvmlDeviceGetCurrentClocksThrottleReasons", h)
    return {} if mask is None else {"clocks_event_reasons": int(mask)}


def _read_minor(r: _Reader, h: Any) -> dict[str, Any]:
    """The N of /dev/nvidiaN (not always the NVML index: a container may get only /dev/nvidia3).
    Only a locator for the device-node check, so its absence is not a health finding."""
    try:
        return {"minor_number": int(r.nvml.nvmlDeviceGetMinorNumber(h))}
    except (AttributeError, r.nvml.NVMLError):
        return {}


def gather_gpu(nvml: Any, index: int) -> dict[str, Any]:
    """One GPU's health values as plain JSON-able data; fields NVML cannot give are absent and
    named in "unsupported" (or "errors" with NVML's code and text)."""
    r = _Reader(nvml)
    h = r.get("handle", "nvmlDeviceGetHandleByIndex", index)
    out: dict[str, Any] = {"index": index}
    if h is not None:
        pci = r.get("pci_bus_id", "nvmlDeviceGetPciInfo", h)
        name, uuid = r.get("name", "nvmlDeviceGetName", h), r.get("uuid", "nvmlDeviceGetUUID", h)
        out.update(name=_text(name) if name is not None else None, uuid=_text(uuid) if uuid is not None else None)
        out["pci_bus_id"] = _text(pci.busId) if pci is not None else None
        for part in (_read_minor, _read_ecc, _read_memory_repair, _read_recovery, _read_pcie, _read_nvlink, _read_clocks):
            out.update(part(r, h))
    out.update(unsupported=r.unsupported, errors=r.errors)
    return out


def gather_health(handle_count: int | None = None, nvml: Any = None) -> dict[str, Any]:
    """Every GPU's health values, written against nvidia-ml-py; meant to run in a subprocess with a
    deadline (NVML can block on a wedged GPU). Importing this module touches nothing; only this
    call loads NVML. ``handle_count`` limits how many GPUs are read (default: all)."""
    if nvml is None:
        try:
            import pynvml  # nvidia-ml-py, a dependency of envdoctor
        except ImportError as e:
            return {"gpus": [], "error": f"nvidia-ml-py is not importable: {e}"}
        nvml = pynvml
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as e:
        return {"gpus": [], "error": f"NVML could not start: {e}"}
    try:
        count = handle_count if handle_count is not None else nvml.nvmlDeviceGetCount()
        return {"gpus": [gather_gpu(nvml, i) for i in range(count)]}
    except nvml.NVMLError as e:
        return {"gpus": [], "error": f"NVML could not count GPUs: {e}"}
    finally:
        try:
            nvml.nvmlShutdown()
        except nvml.NVMLError:
            pass
