#!/usr/bin/env python3
"""On a GPU machine: the smokes compile in the user's own cache locations.

Run as root (it mounts tmpfs) on a throwaway GPU machine with envdoctor installed next to a CUDA
torch and Triton:  python3 verification/cache_locations.py   (about 3-5 minutes).

Cases, each asserted; the script prints every command, the rows it judges and PASS/FAIL, and
exits 1 when any assertion fails (2 when it cannot run at all):
  healthy      TRITON_CACHE_DIR and TORCHINDUCTOR_CACHE_DIR on a normal disk: the cache checks
               and smoke.triton / smoke.compile pass, and each location holds afterwards only
               what it held before (no envdoctor-probe-* subdirectory)
  triton full  TRITON_CACHE_DIR on a 1 MiB tmpfs filled to the last byte: `envdoctor check`
               (the default run) is not HEALTHY (exit 1); triton.cache_dir and smoke.triton fail
               naming the path and TRITON_CACHE_DIR
  inductor full  the same for TORCHINDUCTOR_CACHE_DIR: compile.inductor_cache and smoke.compile
  SIGTERM      envdoctor stopped mid-smoke: exit 130, the user's cache holds no subdirectory
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ENVDOCTOR = [shutil.which("envdoctor")] if shutil.which("envdoctor") else [sys.executable, "-m", "envdoctor"]
FAILED: list[str] = []


def expect(ok: bool, what: str) -> None:
    print(f"  {'PASS' if ok else 'FAIL'}: {what}", flush=True)
    if not ok:
        FAILED.append(what)


def check(env_extra: dict, *args: str) -> tuple[int, dict]:
    cmd = [*ENVDOCTOR, "check", "--format", "json", *args]
    print(f"\n$ {' '.join(f'{k}={v}' for k, v in env_extra.items())} {' '.join(cmd)}", flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **env_extra}, timeout=600)
    try:
        rows = {r["id"]: r for r in json.loads(done.stdout)["results"]}
    except (ValueError, KeyError):
        print(done.stdout[-2000:], done.stderr[-2000:])
        rows = {}
    print(f"  exit={done.returncode}")
    for r in rows.values():
        if (
            r["status"] != "pass"
            and r["status"] != "skip"
            or r["id"].startswith(("smoke.triton", "smoke.compile", "triton.cache", "compile.ind"))
        ):
            print(f"  {r['id']:<24} {r['status']:<5} {r['message'][:400]}")
            if r.get("hint"):
                print(f"  {'':<24}       hint: {r['hint'][:300]}")
    return done.returncode, rows


def full_tmpfs(where: str) -> None:
    """Mount a 1 MiB tmpfs at ``where`` and fill it to the last byte (tests/test_locations.py too)."""
    os.makedirs(where, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", where], check=True, capture_output=True)
    with open(os.path.join(where, "filler"), "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
    print(f"  mounted a full 1 MiB tmpfs at {where}: {shutil.disk_usage(where).free} bytes free")


def names(row: dict | None, path: str, var: str) -> bool:
    return bool(row) and row["status"] == "fail" and path in row["message"] and var in row["message"]


def healthy(base: str) -> None:
    print("\n=== healthy: both caches on a normal disk ===")
    tri, ind = os.path.join(base, "tri-ok"), os.path.join(base, "ind-ok")
    for d in (tri, ind):
        os.makedirs(d)
        open(os.path.join(d, "kept"), "w").close()
    rc, rows = check(
        {"TRITON_CACHE_DIR": tri, "TORCHINDUCTOR_CACHE_DIR": ind},
        "--select",
        "triton.cache_dir,compile.inductor_cache,smoke.triton,smoke.compile",
    )
    expect(rc == 0, "exit 0")
    for rid in ("triton.cache_dir", "compile.inductor_cache", "smoke.triton", "smoke.compile"):
        expect(rows.get(rid, {}).get("status") == "pass", f"{rid} passes")
    expect(rows.get("smoke.compile", {}).get("details", {}).get("device") == "cuda", "smoke.compile compiled on cuda (Triton kernels)")
    for d in (tri, ind):
        expect(sorted(os.listdir(d)) == ["kept"], f"{d} holds only what it held: {sorted(os.listdir(d))}")


def full(base: str, var: str, check_id: str, smoke_id: str) -> None:
    print(f"\n=== {var} on a full file system ===")
    mnt = os.path.join(base, f"full-{var.lower()}")
    full_tmpfs(mnt)
    path = os.path.join(mnt, "cache")
    try:
        rc, rows = check({var: path})  # the default run: what the user runs
        expect(rc == 1, "envdoctor check is not HEALTHY (exit 1)")
        expect(names(rows.get(check_id), path, var), f"{check_id} fails naming {path} and {var}")
        expect(names(rows.get(smoke_id), path, var), f"{smoke_id} fails naming {path} and {var}")
        expect(var in (rows.get(smoke_id) or {}).get("hint", ""), f"{smoke_id}'s fix names {var}")
        expect(sorted(os.listdir(mnt)) == ["filler"], f"no subdirectory left in {mnt}: {sorted(os.listdir(mnt))}")
    finally:
        subprocess.run(["umount", "-l", mnt])


def sigterm(base: str) -> None:
    print("\n=== SIGTERM to envdoctor mid-smoke ===")
    ind = os.path.join(base, "ind-term")
    os.makedirs(ind)
    cmd = [*ENVDOCTOR, "check", "--select", "smoke.compile"]
    print(f"$ TORCHINDUCTOR_CACHE_DIR={ind} {' '.join(cmd)}   (SIGTERM once the compile wrote to the cache)")
    proc = subprocess.Popen(
        cmd, env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": ind}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    end = time.monotonic() + 300
    while time.monotonic() < end and not any(os.listdir(os.path.join(ind, d)) for d in os.listdir(ind)):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    expect(proc.returncode == 130, f"exit 130 (got {proc.returncode})")
    expect("Traceback" not in err, "no traceback")
    expect(os.listdir(ind) == [], f"{ind} is empty afterwards: {os.listdir(ind)}")


def main() -> int:
    if os.geteuid() != 0:
        print("run as root: the script mounts tmpfs", file=sys.stderr)
        return 2
    base = tempfile.mkdtemp(prefix="envdoctor-locations-")
    print(f"envdoctor: {' '.join(ENVDOCTOR)}; work directory {base}; {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    try:
        healthy(base)
        full(base, "TRITON_CACHE_DIR", "triton.cache_dir", "smoke.triton")
        full(base, "TORCHINDUCTOR_CACHE_DIR", "compile.inductor_cache", "smoke.compile")
        sigterm(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n{len(FAILED)} assertion(s) failed" + (": " + "; ".join(FAILED) if FAILED else ""))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
