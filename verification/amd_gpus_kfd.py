"""On a machine with AMD GPUs and ROCm: the live ``amd_gpus`` fact (read from the KFD topology)
names the same gfx targets as ``rocminfo``. Exits non-zero when they differ or either is empty.

    python verification/amd_gpus_kfd.py
"""

from __future__ import annotations

import re
import subprocess
import sys


def main() -> int:
    from envdoctor_checks.rocm import amd_gpus

    kfd = sorted(g["gfx"] for g in amd_gpus())
    out = subprocess.run(["rocminfo"], capture_output=True, text=True, timeout=60, check=True).stdout
    agents = sorted(re.findall(r"^\s*Name:\s+(gfx[0-9a-f]+)\s*$", out, re.M))
    print(f"KFD topology: {kfd}\nrocminfo:     {agents}")
    if not kfd or kfd != agents:
        print("FAIL: the KFD topology and rocminfo disagree")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
