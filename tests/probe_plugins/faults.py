"""Test-only probe bodies that misbehave the way real smokes do: hang (with a child process),
segfault in a "launch", speak garbage on the result channel, or import torch.

Loaded by the probe worker through ``ProbeClient(extra_path=[this directory])``, exactly as a
third-party plugin's bodies are.
"""

import ctypes
import os
import subprocess
import sys
import time


def hang(pid_file: str) -> None:
    """Start a child that would outlive us, then never answer (a CUDA init that hangs)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(pid_file, "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    print("envdoctor-stage: initialising CUDA on GPU 0", flush=True)
    while True:
        time.sleep(1)


def segfault() -> None:
    print("envdoctor-stage: launching the vector-add kernel", flush=True)
    ctypes.string_at(0)  # reads address 0: SIGSEGV, like a bad kernel launch in a C extension


def no_space() -> None:
    # A body that dies the way a full disk kills a compile: the error on stderr, then the exit.
    print("OSError: [Errno 28] No space left on device: '/tmp/torchinductor'", file=sys.stderr, flush=True)
    os._exit(3)


def garbage() -> None:
    # The worker answers on the file descriptor given as its argv[1]; corrupt that channel.
    os.write(int(sys.argv[1]), b"Segmentation fault? no: just noise from a C library\n")
    time.sleep(60)


def pid() -> int:
    return os.getpid()


def import_torch() -> dict:
    already = "torch" in sys.modules
    import torch

    return {"pid": os.getpid(), "already_loaded": already, "version": torch.__version__}


def daemon(pid_file: str) -> int:
    """Leave a daemon behind (double fork, new session), as a careless body or plugin might."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pid_file + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.replace(pid_file + ".tmp", pid_file)
            time.sleep(600)
        os._exit(0)
    os.wait()
    for _ in range(500):
        if os.path.exists(pid_file):
            break
        time.sleep(0.01)
    return os.getpid()
