"""Fakes for the nvidia/torch tests: a fake ``nvidia-smi`` and /proc- and /sys-like trees."""

from __future__ import annotations

import os
import stat
from pathlib import Path

HERE = Path(__file__).resolve().parent

# What `nvidia-smi --query-gpu=<SMI_FIELDS> --format=csv,noheader,nounits` prints on an H200 box.
H200_CSV = "0, NVIDIA H200, GPU-8d6ff5c2-1111-2222-3333-444455556666, 1654123456789, 9.0, 143771, 512, Disabled, Enabled, Default, 00000000:18:00.0, 580.65.06\n"

PROC_VERSION_580 = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  (dvs-builder@U16-I3-B07-4-3)  Sun Jul 27 06:54:38 UTC 2025\n"
    "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"
)


def fake_nvidia_smi(bindir: Path, mode: str = "h200") -> Path:
    """Install the fake ``nvidia-smi`` (tests/fakes/nvidia-smi) in ``bindir`` with a mode:
    ``h200`` prints one H200, ``hang`` sleeps forever, ``fail`` exits like a broken driver."""
    bindir.mkdir(parents=True, exist_ok=True)
    exe = bindir / "nvidia-smi"
    exe.write_text(f'#!/bin/sh\nFAKE_SMI_MODE={mode} exec {os.environ.get("SHELL_FOR_FAKES", "/bin/sh")} {HERE / "nvidia-smi"} "$@"\n')
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return exe


def pci_tree(root: Path, devices: dict[str, tuple[str, str]]) -> Path:
    """A /sys/bus/pci/devices-like tree: {address: (vendor, class)}."""
    for addr, (vendor, cls) in devices.items():
        d = root / addr
        d.mkdir(parents=True, exist_ok=True)
        (d / "vendor").write_text(vendor + "\n")
        (d / "class").write_text(cls + "\n")
        (d / "device").write_text("0x2335\n")
    return root
