"""The catalog of known error texts: cause, the check that judges it live, the fix, what to ask.

Used by the smoke diagnoses of a live run and by ``envdoctor triage`` on pasted text. Order
matters: specific signatures come before generic ones (an ``undefined symbol`` in flash-attn's
``.so`` is an extension built for another torch; in ``libcusparse`` it is mismatched nvidia-*
wheels), and :func:`envdoctor.signatures.best` takes the first that matches.

Error texts are quoted from public reports (see shared knowledge/failure-catalog.md and
tests/fixtures/triage/cases.toml for the threads).
"""

from __future__ import annotations

from envdoctor import Signature

_S = Signature

# A .so path's package: ".../site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so" -> "flash_attn_2_cuda".
_SO = r"(?:[\w./\\-]*[/\\])?(?P<module>[A-Za-z_][\w]*?)(?:\.cpython-\w+|\.abi3)?(?:-[\w]+-linux-gnu)?\.(?:so|pyd)"

SIGNATURES: tuple[Signature, ...] = (
    # --- torch <-> Triton ------------------------------------------------------------------
    _S(
        "triton.triton_key",
        r"cannot import name '(?P<name>triton_key|get_cuda_stream|AttrsDescriptor|ASTSource|CompiledKernel|JITFunction)' from '(?P<mod>triton[\w.]*)'",
        "the installed Triton is not the one this torch was built for (torch imports {name} from {mod}, which that Triton lacks)",
        "triton_torch_mismatch",
        "triton.torch_pin",
        "Install the Triton that torch pins: pip install \"triton==$(pip show torch | sed -n 's/^Requires: .*//p')\" — "
        "`pip show torch` / `pip check` name the pin; or reinstall torch and Triton together",
        ask="the output of `pip list | grep -i -E 'torch|triton'` (or `envdoctor check`)",
    ),
    _S(
        "triton.missing_module",
        r"No module named '(?P<name>triton\.[\w.]+)'",
        "the installed Triton is older or newer than this torch expects ({name} does not exist in it)",
        "triton_torch_mismatch",
        "triton.torch_pin",
        "Install the Triton version torch pins (pip check names it), e.g. pip install --force-reinstall torch==<your torch>",
        ask="the output of `pip list | grep -i -E 'torch|triton'`",
    ),
    _S(
        "triton.pip_conflict",
        r"torch (?P<torch>[\w.+]+) requires (?P<pin>(?:pytorch-)?triton==[\w.+]+)[^,\n]*, but you have (?P<have>(?:pytorch-)?triton [\w.+]+)",
        "pip reports torch {torch} needs {pin} but {have} is installed",
        "triton_torch_mismatch",
        "triton.torch_pin",
        "pip install '{pin}'",
    ),
    _S(
        "triton.missing",
        r"TritonMissing|Cannot find a working triton installation",
        "torch.compile needs Triton for GPU code and finds no working Triton (not installed, too old, or a broken install)",
        "triton_missing",
        "compile.triton_available",
        "Install the Triton torch pins: pip install --force-reinstall torch==<your torch> (without --no-deps); "
        "on Windows use the triton-windows distribution",
        ask="the output of `pip list | grep -i -E 'torch|triton'` and the platform (OS, CPU architecture)",
    ),
    _S(
        "triton.no_wheel",
        r"No matching distribution found for (?P<dist>pytorch-triton|torchtriton|triton)\b",
        "pip finds no {dist} wheel for this platform or Python version (Triton ships wheels only for some Pythons, "
        "operating systems and CPU architectures)",
        "triton_missing",
        "compile.triton_available",
        "Use a Python version and platform Triton publishes wheels for (Linux x86_64/aarch64, a Python torch supports), "
        "or on Windows the triton-windows distribution; torch.compile(backend='aot_eager') works without Triton",
        ask="the Python version, OS and CPU architecture (`python -VV`, `uname -m`)",
    ),
    _S(
        "triton.gpu_too_old",
        r"Found (?P<gpu>[^\n]+?) which is too old to be supported by the triton GPU compiler|GPUTooOldForTriton",
        "the GPU is older than Triton supports (compute capability below 7.0): torch.compile cannot generate GPU kernels for it",
        "gpu_too_old_for_triton",
        "triton.gpu_supported",
        "Use torch.compile(backend='aot_eager') or eager mode on this GPU, or run on a GPU of compute capability 7.0 or newer",
    ),
    _S(
        "triton.ptxas_arch",
        r"ptxas fatal\s*: Value '(?P<arch>sm_\w+)' is not defined for option 'gpu-name'",
        "Triton's bundled ptxas does not know the GPU's architecture {arch}: this Triton is older than the GPU",
        "ptxas_arch_unsupported",
        "triton.ptxas",
        "Upgrade torch and Triton to a release that supports this GPU, or point TRITON_PTXAS_PATH at the ptxas of a CUDA "
        "toolkit that knows {arch}: export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas",
    ),
    _S(
        "triton.ptxas_version",
        r"Unsupported \.version (?P<ptx>[\d.]+); current version is '(?P<have>[\d.]+)'",
        "a ptxas older than the PTX Triton generates (PTX ISA {ptx}, ptxas knows {have}) — usually TRITON_PTXAS_PATH or an old CUDA on PATH",
        "ptxas_arch_unsupported",
        "triton.ptxas",
        "Unset TRITON_PTXAS_PATH so Triton uses its bundled ptxas, or point it at a newer CUDA toolkit's ptxas",
    ),
    _S(
        "triton.libcuda_assert",
        r"libcuda\.so cannot found",
        "Triton cannot find libcuda.so (the NVIDIA driver library) through the linker cache",
        "libcuda_not_found",
        "triton.libcuda",
        "Refresh the linker cache: sudo ldconfig (in containers run it once the NVIDIA runtime has injected libcuda.so.1), "
        "or export TRITON_LIBCUDA_PATH=<dir holding libcuda.so.1>",
        ask="the output of `ldconfig -p | grep libcuda` and whether this runs in a container",
    ),
    _S(
        "triton.lcuda",
        r"cannot find -lcuda\b",
        "the linker cannot find the unversioned libcuda.so that Triton's launcher links with -lcuda (only libcuda.so.1 is there: common in WSL and some images)",
        "libcuda_not_found",
        "triton.libcuda",
        "Create the link next to libcuda.so.1 and refresh the cache: sudo ln -s libcuda.so.1 <dir>/libcuda.so && sudo ldconfig; "
        "or export TRITON_LIBCUDA_PATH=<dir holding libcuda.so> (WSL: /usr/lib/wsl/lib)",
        ask="the output of `ldconfig -p | grep libcuda`",
    ),
    _S(
        "triton.cache_permission",
        r"PermissionError: \[Errno 13\] Permission denied: '(?P<path>[^']*\.triton[^']*)'",
        "Triton's cache directory {path} is not writable by this user (HOME unset or '/', another user's cache, or a read-only image)",
        "cache_not_writable",
        "triton.cache_dir",
        "Point Triton at a writable directory: export TRITON_CACHE_DIR=/tmp/triton-cache (in an image: ENV TRITON_CACHE_DIR=/tmp/triton-cache)",
    ),
    # --- compilers and headers -------------------------------------------------------------
    _S(
        "toolchain.python_h",
        r"fatal error: Python\.h: No such file or directory|include file 'Python\.h' not found",
        "Python.h is missing: Triton and Inductor compile a small C module against this Python's headers",
        "missing_python_h",
        "toolchain.python_h",
        "Install the headers of this Python: apt-get install python3-dev (python3.X-dev matching it), or dnf install python3-devel",
        ask="the Python version and how it was installed (distro package, pyenv, conda, uv)",
    ),
    _S(
        "triton.no_c_compiler",
        r"Failed to find C compiler",
        "no C compiler found: Triton builds its launcher with gcc or clang (or $CC)",
        "no_c_compiler",
        "triton.c_compiler",
        "Install a C compiler (apt-get install gcc) or point CC at one: export CC=/usr/bin/gcc",
    ),
    _S(
        "compile.no_cxx_compiler",
        r"InvalidCxxCompiler|No working C\+\+ compiler found",
        "no working C++ compiler: Inductor's CPU backend compiles C++",
        "no_c_compiler",
        "compile.cxx_compiler",
        "Install a C++ compiler (apt-get install g++) or point CXX at one: export CXX=/usr/bin/g++",
    ),
    _S(
        "compile.getuser",
        r"getpwuid\(\): uid not found(?:: (?P<uid>\d+))?|getpass\.py\S*, line \d+, in getuser",
        "the process runs as a UID with no passwd entry: getpass.getuser() fails where Inductor names its cache directory",
        "getuser_fails",
        "compile.inductor_cache",
        "Set the user name and caches explicitly: export USER=app LOGNAME=app TORCHINDUCTOR_CACHE_DIR=/tmp/inductor TRITON_CACHE_DIR=/tmp/triton",
    ),
    # --- compiled extensions and CUDA libraries --------------------------------------------
    _S(
        "torch.nvidia_lib_symbol",
        r"(?P<lib>lib(?:cusparse|cublas\w*|cudnn\w*|nccl|nvJitLink|cufft|curand|cusolver)[\w.]*)[^\n]*undefined symbol: (?P<symbol>\S+)",
        "the NVIDIA CUDA libraries loaded do not match each other or torch ({lib}: undefined symbol {symbol}): mixed nvidia-* wheel versions "
        "or a system CUDA on LD_LIBRARY_PATH shadowing torch's own",
        "nvidia_pip_lib_mismatch",
        "torch.nvidia_wheel_pins",
        "Unset LD_LIBRARY_PATH and retry; if it persists reinstall torch with its pinned CUDA libraries: pip install --force-reinstall torch==<your torch>",
        ask="`pip list | grep nvidia` and `echo $LD_LIBRARY_PATH`",
    ),
    _S(
        "torch.torchvision_symbol",
        r"torchvision[/\\][\w/\\.-]*\.(?:so|pyd)[^\n]*undefined symbol: (?P<symbol>\S+)",
        "torchvision's compiled operators were built for another torch (undefined symbol {symbol})",
        "torchvision_torch_mismatch",
        "torch.extension_abi",
        "Install the torchvision release that pairs with this torch: pip install --force-reinstall torch==<your torch> torchvision",
        ask="`pip list | grep -E 'torch|torchvision'`",
    ),
    _S(
        "torch.extension_built_for_cpu_torch",
        r"built for:?\s*PyTorch (?P<want>\S+) with CUDA (?P<cuda>\S+) \(you have (?P<have>[\w.]+\+cpu)\)",
        "the extension was built for the CUDA torch {want} but a CPU-only torch ({have}) is installed",
        "cpu_torch_on_gpu_machine",
        "torch.cpu_build_on_gpu_machine",
        "Install the CUDA build of torch the extension was built for: pip install --force-reinstall torch=={want} --index-url https://download.pytorch.org/whl/cu<XY>",
    ),
    _S(
        "torch.extension_built_for_other_torch",
        r"built for:?\s*PyTorch (?P<want>\S+) with CUDA (?P<cuda>\S+) \(you have (?P<have>\S+)\)",
        "the extension was built for torch {want} but torch {have} is installed",
        "extension_abi_mismatch",
        "torch.extension_abi",
        "Install the extension's build for torch {have}, or torch {want}",
    ),
    _S(
        "torch.extension_abi",
        _SO + r": undefined symbol: (?P<symbol>_Z\S+)",
        "the compiled extension {module} was built for another torch (undefined symbol {symbol}): torch was upgraded or swapped after it was installed",
        "extension_abi_mismatch",
        "torch.extension_abi",
        "Reinstall the extension for this torch: a wheel built for it, or a rebuild: pip install --no-build-isolation --no-cache-dir --force-reinstall <package>",
        ask="`pip list` (torch and the extension's versions) and how the extension was installed (wheel, source build)",
    ),
    _S(
        "torch.torchvision_nms",
        r"operator torchvision::nms does not exist",
        "torchvision's compiled operators do not match the installed torch (torchvision built for another torch release)",
        "torchvision_torch_mismatch",
        "torch.extension_abi",
        "Install the torchvision that matches torch (the same release line): pip install --force-reinstall torch==<your torch> torchvision",
    ),
    _S(
        "torch.cuda_lib_missing",
        r"(?P<lib>lib(?:cudnn|cublas\w*|nccl|cusparse\w*|cufft|curand|cusolver|nvJitLink|cudart|nvrtc|cupti)[\w.]*): cannot open shared object file",
        "{lib} is missing: torch's CUDA libraries (the nvidia-* pip packages) are not installed where torch looks for them",
        "nvidia_lib_missing",
        "torch.importable",
        "pip install --force-reinstall torch==<your torch> without --no-deps; on RHEL-like systems check that purelib and platlib are the same directory",
        ask="`pip list | grep -i -E 'torch|nvidia'` and how torch was installed",
    ),
    _S(
        "toolchain.libgomp",
        r"libgomp\.so\.1: cannot open shared object file",
        "libgomp (OpenMP), which torch needs, is not installed",
        "libgomp_missing",
        "toolchain.libgomp",
        "apt-get install libgomp1 (dnf install libgomp)",
    ),
    _S(
        "system.glibc",
        r"version `(?P<glibc>GLIBC_[\d.]+)' not found",
        "the C library is older than a binary needs ({glibc})",
        "glibc_too_old",
        "system.os",
        "Use a base image or OS with a newer glibc (torch wheels need glibc >= 2.28), or install a build made for this glibc",
    ),
    _S(
        "torch.numpy_abi",
        r"A module that was compiled using NumPy 1\.x cannot be run in\s+NumPy 2|_ARRAY_API not found|Numpy is not available",
        "a module compiled against NumPy 1.x is imported with NumPy 2 installed",
        "numpy_abi",
        "torch.numpy_abi",
        "pip install 'numpy<2', or upgrade the package compiled against NumPy 1.x (and torch < 2.3) to a NumPy 2 build",
        ask="`pip list | grep -i -E 'numpy|torch'`",
    ),
    # --- driver and GPU --------------------------------------------------------------------
    _S(
        "torch.driver_too_old",
        r"The NVIDIA driver on your system is too old(?: \(found version (?P<found>\d+)\))?",
        "the NVIDIA driver is older than the CUDA this torch (or the extension being built) needs",
        "driver_too_old_for_torch_cuda",
        "torch.driver_supports_cuda",
        "Upgrade the NVIDIA driver, or install a torch built for the driver's CUDA (e.g. pip install torch --index-url https://download.pytorch.org/whl/cu118)",
        ask="`nvidia-smi` (the driver version and its CUDA) and `python -c 'import torch; print(torch.__version__, torch.version.cuda)'`",
    ),
    _S(
        "torch.driver_insufficient",
        r"CUDA driver version is insufficient for CUDA runtime version",
        "the NVIDIA driver is older than the CUDA runtime this program uses",
        "driver_too_old_for_torch_cuda",
        "torch.driver_supports_cuda",
        "Upgrade the NVIDIA driver, or install a torch built for an older CUDA",
        ask="`nvidia-smi` and the torch version with its CUDA",
    ),
    _S(
        "torch.no_kernel_image",
        r"no kernel image is available for execution on the device",
        "this torch (or extension) has no kernels for the GPU's architecture: the GPU is newer or older than the build's arch list",
        "arch_not_in_torch_build",
        "torch.arch_support",
        "Install a torch build whose arch list includes the GPU (torch.cuda.get_arch_list()); for new GPUs use a build for the newest CUDA "
        "(e.g. --index-url https://download.pytorch.org/whl/cu128 or newer)",
        ask="`nvidia-smi` (the GPU) and `python -c 'import torch; print(torch.__version__, torch.cuda.get_arch_list())'`",
    ),
    _S(
        "torch.arch_not_compatible",
        r"with CUDA capability (?P<arch>sm_\d+\w?) is not compatible with the current PyTorch installation",
        "this torch build has no kernels for the GPU's architecture {arch}",
        "arch_not_in_torch_build",
        "torch.arch_support",
        "Install a torch build that includes {arch} (a newer CUDA build for new GPUs, an older torch for old GPUs)",
    ),
    _S(
        "torch.not_compiled_with_cuda",
        r"Torch not compiled with CUDA enabled",
        "a CPU-only build of torch is installed",
        "cpu_torch_on_gpu_machine",
        "torch.cpu_build_on_gpu_machine",
        "Install a CUDA build: pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128 (pick the CUDA your driver supports)",
        ask="`pip list | grep torch` and `nvidia-smi`",
    ),
    _S(
        "nvidia.no_driver",
        r"Found no NVIDIA driver on your system",
        "no NVIDIA driver reachable from this process (none installed, or the container was started without GPUs)",
        "cuda_not_available_driver",
        "nvidia.driver",
        "Install the NVIDIA driver; in Docker start the container with --gpus all (NVIDIA Container Toolkit)",
        ask="`nvidia-smi` on the host and in the container",
    ),
    _S(
        "nvidia.driver_library_mismatch",
        r"Driver/library version mismatch",
        "the NVIDIA kernel module and the user-space driver libraries differ (the driver was upgraded and the machine not rebooted)",
        "driver_library_mismatch",
        "nvidia.driver_library_mismatch",
        "Reboot (or unload and reload the nvidia kernel modules)",
    ),
    _S(
        "nvidia.fabric_manager",
        r"system not yet initialized|cudaErrorSystemNotReady|CUDA error: 802",
        "CUDA error 802: the NVSwitch fabric is not initialised (nvidia-fabricmanager not running or not matching the driver)",
        "fabric_manager_not_ready",
        "nvidia.fabric_manager",
        "sudo systemctl enable --now nvidia-fabricmanager (its version must match the driver), then retry",
    ),
    _S(
        "nvidia.fabric_in_progress",
        r"Fabric\s*\n\s*State\s*:\s*In Progress",
        "nvidia-smi -q shows the NVSwitch fabric still training (Fabric State: In Progress): CUDA fails with error 802 until it completes",
        "fabric_manager_not_ready",
        "nvidia.fabric_manager",
        "Check nvidia-fabricmanager (systemctl status nvidia-fabricmanager; its version must match the driver) and wait for "
        "Fabric State: Completed before starting CUDA work",
        ask="the output of `systemctl status nvidia-fabricmanager` and of `nvidia-smi -q | grep -A2 Fabric` on the affected node",
    ),
    _S(
        "nvidia.forward_compat",
        r"forward compatibility was attempted on non supported HW|CUDA error: 804",
        "CUDA's forward-compatibility libraries are loaded on a GPU that does not support them",
        "forward_compat",
        "nvidia.forward_compat",
        "Remove the CUDA compat directory (…/cuda/compat) from LD_LIBRARY_PATH",
    ),
    _S(
        "nvidia.visible_devices",
        r"invalid device ordinal|changing env variable CUDA_VISIBLE_DEVICES after program start",
        "CUDA_VISIBLE_DEVICES names GPUs that do not exist here, or it changed after CUDA initialised",
        "cuda_visible_devices",
        "nvidia.cuda_visible_devices",
        "Fix or unset CUDA_VISIBLE_DEVICES (it must list existing indices or UUIDs) and set it before the program starts",
    ),
    _S(
        "system.shm",
        r"out of shared memory|insufficient shared memory \(shm\)|Bus\s+error",
        "shared memory (/dev/shm) exhausted: Docker's default is 64 MiB",
        "shm_too_small",
        "system.shm",
        "Give the container more /dev/shm: docker run --shm-size=16g (or --ipc=host); in Kubernetes mount an emptyDir with medium: Memory",
    ),
    _S(
        "compile.python_too_new",
        r"(?:Python|python) (?P<py>3\.\d+)\+? (?:is )?not (?:yet )?supported (?:by|for) (?:torch\.compile|Dynamo)",
        "this torch's torch.compile (Dynamo) does not support Python {py}",
        "python_too_new_for_dynamo",
        "compile.python_version",
        "Use a Python the torch release supports for torch.compile, or upgrade torch",
    ),
    # --- generic, last ---------------------------------------------------------------------
    _S(
        "system.no_space",
        r"No space left on device",
        "the disk holding the temporary or cache directory is full",
        "disk_full",
        "system.disk",
        "Free space in the temporary directory or point TMPDIR at a larger disk",
    ),
    _S(
        "system.read_only",
        r"[Cc]annot create temporary file[^\n]*|Read-only file system[^\n]*",
        "a temporary or cache directory is not writable ({0})",
        "cache_not_writable",
        "compile.inductor_cache",
        "Point TMPDIR (and the cache directories) at a writable file system: export TMPDIR=/writable/tmp",
    ),
    _S(
        "system.permission",
        r"Permission denied: '?(?P<path>[^'\n]+)'?",
        "a directory torch or Triton writes to is not writable ({path})",
        "cache_not_writable",
        "compile.inductor_cache",
        "Make the temporary and cache directories writable, e.g. export TMPDIR=/writable/tmp TRITON_CACHE_DIR=/writable/triton",
    ),
    _S(
        "torch.cuda_error",
        r"(?P<err>CUDA error: [^\n]+|cudaError\w+|CUDA_ERROR_\w+)",
        "{err}",
        "cuda_error",
        "smoke.matmul",
        "Check the GPU and driver: nvidia-smi; look for Xid errors in dmesg; see the nvidia.* and torch.* checks",
        ask="`nvidia-smi`, `dmesg | grep -i xid` and the full error",
    ),
)
