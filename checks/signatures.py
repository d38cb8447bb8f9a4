"""The catalog of known error texts: cause, the check that judges it live, the fix, what to ask.

Each row's ``scope`` says where its text is searched: ``"paste"`` (the default) by the smoke
diagnoses of a live run and by ``envdoctor triage`` on pasted text; ``"check:<id>"`` only within
that check's own error (``hints_for``). Order matters: specific signatures come before generic ones (an ``undefined symbol`` in flash-attn's
``.so`` is an extension built for another torch; in ``libcusparse`` it is mismatched nvidia-*
wheels), and :func:`envdoctor.signatures.best` takes the first that matches.

Error texts are quoted from public reports (see shared knowledge/failure-catalog.md and
tests/fixtures/triage/cases.toml for the threads).
"""

from __future__ import annotations

from envdoctor import Signature

_S = Signature
# what shows the toolkit that builds an extension beside the CUDA torch was built with
ASK_TOOLKIT = "`nvcc --version`, `echo $CUDA_HOME` and `python -c 'import torch; print(torch.version.cuda)'`"

# A .so path's package: ".../site-packages/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so" -> "flash_attn_2_cuda".
# It starts where a path does (not inside one: tried from every character of a long token, an
# unanchored path would cost the square of its length) and every repeat is bounded.
_SO = r"(?<![\w./\\-])(?:[\w./\\-]{0,1000}[/\\])?(?P<module>[A-Za-z_]\w{0,200}?)(?:\.cpython-\w{1,60}|\.abi3)?(?:-\w{1,60}-linux-gnu)?\.(?:so|pyd)"

# Prints torch's own requirement on Triton ("triton==3.6.0"; nightlies: "pytorch-triton==…"),
# from its metadata: `pip show` lists requirements without their versions.
TRITON_PIN = (
    "import importlib.metadata as m; "
    "print(next(r.split(';')[0].strip() for r in m.requires('torch') or [] if r.startswith(('triton', 'pytorch-triton'))))"
)

SIGNATURES: tuple[Signature, ...] = (
    # --- torch <-> Triton ------------------------------------------------------------------
    _S(
        id="triton.triton_key",
        pattern=r"cannot import name '(?P<name>triton_key|get_cuda_stream|AttrsDescriptor|ASTSource|CompiledKernel|JITFunction)' from '(?P<mod>triton[\w.]{0,200})'",
        cause="the installed Triton is not the one this torch was built for (torch imports {name} from {mod}, which that Triton lacks)",
        cause_id="triton_torch_mismatch",
        check="triton.torch_pin",
        fix="Install the Triton that torch pins: "
        f'python -m pip install "$(python -c "{TRITON_PIN}")" — `pip check` names the pin too; or reinstall torch and Triton together',
        ask="the output of `pip list | grep -i -E 'torch|triton'` (or `envdoctor check`)",
        ask_facts=("dists", "triton_pkg"),
    ),
    _S(
        id="triton.missing_module",
        pattern=r"No module named '(?P<name>triton\. ?[\w.]+)'",
        cause="the installed Triton is older or newer than this torch expects ({name} does not exist in it)",
        cause_id="triton_torch_mismatch",
        check="triton.torch_pin",
        fix="Install the Triton version torch pins (pip check names it), e.g. pip install --force-reinstall torch==<your torch>",
        ask="the output of `pip list | grep -i -E 'torch|triton'`",
        ask_facts=("dists", "triton_pkg"),
    ),
    _S(
        id="triton.pip_conflict",
        pattern=r"torch (?P<torch>[\w.+]+) requires (?P<pin>(?:pytorch-)?triton==[\w.+]+)[^,]{0,300},\s{1,10}but you have (?P<have>(?:pytorch-)?triton [\w.+]+)",
        cause="pip reports torch {torch} needs {pin} but {have} is installed",
        cause_id="triton_torch_mismatch",
        check="triton.torch_pin",
        fix="pip install '{pin}'",
    ),
    _S(
        id="triton.missing",
        pattern=r"TritonMissing|Cannot find a working triton installation",
        cause="torch.compile needs Triton for GPU code and finds no working Triton (not installed, too old, or a broken install)",
        cause_id="triton_missing",
        check="compile.triton_available",
        fix="Install the Triton torch pins: pip install --force-reinstall torch==<your torch> (without --no-deps); "
        "on Windows use the triton-windows distribution",
        ask="the output of `pip list | grep -i -E 'torch|triton'` and the platform (OS, CPU architecture)",
        ask_facts=("dists", "triton_pkg"),
    ),
    _S(
        id="triton.no_wheel",
        pattern=r"(?:No matching distribution found for|Could not find a version that satisfies the requirement) (?P<dist>pytorch-triton|torchtriton|triton)\b",
        cause="pip finds no {dist} wheel for this platform or Python version (Triton ships wheels only for some Pythons, "
        "operating systems and CPU architectures)",
        cause_id="triton_missing",
        check="compile.triton_available",
        fix="Use a Python version and platform Triton publishes wheels for (Linux x86_64/aarch64, a Python torch supports), "
        "or on Windows the triton-windows distribution; torch.compile(backend='aot_eager') works without Triton",
        ask="the Python version, OS and CPU architecture (`python -VV`, `uname -m`)",
    ),
    _S(
        id="triton.gpu_too_old",
        pattern=r"Found (?P<gpu>[^\n]{1,200}?) which is too old to be supported by the triton GPU compiler|GPUTooOldForTriton",
        cause="the GPU is older than Triton supports (compute capability below 7.0): torch.compile cannot generate GPU kernels for it",
        cause_id="gpu_too_old_for_triton",
        check="triton.gpu_supported",
        fix="Use torch.compile(backend='aot_eager') or eager mode on this GPU, or run on a GPU of compute capability 7.0 or newer",
    ),
    _S(
        id="triton.ptxas_arch",
        pattern=r"(?:ptxas[\w-]{0,20} fatal\s*:\s*)?Value '(?P<arch>sm_\w+)' is not defined for option 'gpu-name'",  # or in a title, bare
        cause="Triton's bundled ptxas does not know the GPU's architecture {arch}: this Triton is older than the GPU",
        cause_id="ptxas_arch_unsupported",
        check="triton.ptxas",
        fix="Upgrade torch and Triton to a release that supports this GPU, or point TRITON_PTXAS_PATH at the ptxas of a CUDA "
        "toolkit that knows {arch}: export TRITON_PTXAS_PATH=/usr/local/cuda/bin/ptxas",
    ),
    _S(
        id="triton.ptxas_version",
        pattern=r"Unsupported \.version (?P<ptx>[\d.]{1,20}); current version is '(?P<have>[\d.]{1,20})'",
        cause="a ptxas older than the PTX Triton generates (PTX ISA {ptx}, ptxas knows {have}) — usually TRITON_PTXAS_PATH or an old CUDA on PATH",
        cause_id="ptxas_arch_unsupported",
        check="triton.ptxas",
        fix="Unset TRITON_PTXAS_PATH so Triton uses its bundled ptxas, or point it at a newer CUDA toolkit's ptxas",
    ),
    _S(
        id="cuda.stub_library",
        pattern=r"CUDA driver is a stub library|CUDA_ERROR_STUB_LIBRARY|cudaErrorStubLibrary",
        cause="the libcuda.so loaded is the CUDA toolkit's link-time stub (…/lib64/stubs), not the driver's: a stubs directory "
        "on LD_LIBRARY_PATH (or in the linker cache) comes before the driver's library",
        cause_id="library_shadowing",
        check="torch.importable",
        fix="Remove the stubs directory from LD_LIBRARY_PATH and /etc/ld.so.conf.d (then ldconfig), so the driver's libcuda.so.1 "
        "loads; `ldconfig -p | grep libcuda` and `echo $LD_LIBRARY_PATH` show which comes first",
        ask="`echo $LD_LIBRARY_PATH` and `ldconfig -p | grep libcuda`",
    ),
    _S(
        id="triton.libcuda_assert",
        pattern=r"libcuda\.so cannot found",
        cause="Triton cannot find libcuda.so (the NVIDIA driver library) through the linker cache",
        cause_id="libcuda_not_found",
        check="triton.libcuda",
        fix="Refresh the linker cache: sudo ldconfig (in containers run it once the NVIDIA runtime has injected libcuda.so.1), "
        "or export TRITON_LIBCUDA_PATH=<dir holding libcuda.so.1>",
        ask="the output of `ldconfig -p | grep libcuda` and whether this runs in a container",
        ask_facts=("ldconfig", "container"),
    ),
    _S(
        id="triton.lcuda",
        pattern=r"cannot find -lcuda\b|skipping incompatible \S{0,300}libcuda\.so when searching for -lcuda",
        cause="the linker cannot find the unversioned libcuda.so that Triton's launcher links with -lcuda (only libcuda.so.1 is there: common in WSL and some images)",
        cause_id="libcuda_not_found",
        check="triton.libcuda",
        fix="Create the link next to libcuda.so.1 and refresh the cache: sudo ln -s libcuda.so.1 <dir>/libcuda.so && sudo ldconfig; "
        "or export TRITON_LIBCUDA_PATH=<dir holding libcuda.so> (WSL: /usr/lib/wsl/lib)",
        ask="the output of `ldconfig -p | grep libcuda`",
        ask_facts=("ldconfig",),
    ),
    _S(
        id="triton.cache_permission",
        pattern=r"PermissionError: \[Errno 13\] Permission denied: '(?P<path>[^']{0,1000}\.triton[^']{0,1000})'",
        cause="Triton's cache directory {path} is not writable by this user (HOME unset or '/', another user's cache, or a read-only image)",
        cause_id="cache_not_writable",
        check="triton.cache_dir",
        fix="Point Triton at a writable directory: export TRITON_CACHE_DIR=/tmp/triton-cache (in an image: ENV TRITON_CACHE_DIR=/tmp/triton-cache)",
    ),
    _S(
        id="triton.cc_cmd",
        pattern=r"Failed to compile\. cc_cmd",
        cause="Triton could not run the C compiler it found (CC names a compiler that is missing or broken)",
        cause_id="no_c_compiler",
        check="triton.c_compiler",
        fix="Unset CC or point it at a working compiler (on Windows the cl.exe of an installed MSVC, or let triton-windows use its bundled TinyCC)",
        ask="the value of CC and how the compiler was installed",
    ),
    # --- compilers and headers -------------------------------------------------------------
    _S(
        id="toolchain.python_h",
        pattern=r"fatal error: Python\.h: No such file or directory|include file 'Python\.h' not found",
        cause="Python.h is missing: Triton and Inductor compile a small C module against this Python's headers",
        cause_id="missing_python_h",
        check="toolchain.python_h",
        fix="Install the headers of this Python: apt-get install python3-dev (python3.X-dev matching it), or dnf install python3-devel",
        ask="the Python version and how it was installed (distro package, pyenv, conda, uv)",
    ),
    _S(
        id="triton.no_c_compiler",
        pattern=r"Failed to find C compiler",
        cause="no C compiler found: Triton builds its launcher with gcc or clang (or $CC)",
        cause_id="no_c_compiler",
        check="triton.c_compiler",
        fix="Install a C compiler (apt-get install gcc) or point CC at one: export CC=/usr/bin/gcc",
    ),
    _S(
        id="compile.no_cxx_compiler",
        pattern=r"InvalidCxxCompiler|No working C\+\+ compiler found",
        cause="no working C++ compiler: Inductor's CPU backend compiles C++",
        cause_id="no_c_compiler",
        check="compile.cxx_compiler",
        fix="Install a C++ compiler (apt-get install g++) or point CXX at one: export CXX=/usr/bin/g++",
    ),
    _S(
        id="compile.getuser",
        pattern=r"getpwuid\(\): uid not found(?:: (?P<uid>\d+))?|getpass\.py\S{0,20}, line \d+, in getuser",
        cause="the process runs as a UID with no passwd entry: getpass.getuser() fails where Inductor names its cache directory",
        cause_id="getuser_fails",
        check="compile.inductor_cache",
        fix="Set the user name and caches explicitly: export USER=app LOGNAME=app TORCHINDUCTOR_CACHE_DIR=/tmp/inductor TRITON_CACHE_DIR=/tmp/triton",
    ),
    _S(
        id="compile.getuser_keyerror",
        pattern=r"getpwuid\(\)[^\n]{0,80}KeyError|KeyError[^\n]{0,40}getpwuid",
        cause="the process runs as a UID with no passwd entry: getpass.getuser() raises KeyError where Inductor names its cache directory",
        cause_id="getuser_fails",
        check="compile.inductor_cache",
        fix="Set the user name and caches explicitly: export USER=app LOGNAME=app TORCHINDUCTOR_CACHE_DIR=/tmp/inductor TRITON_CACHE_DIR=/tmp/triton",
    ),
    # --- compiled extensions and CUDA libraries --------------------------------------------
    _S(
        id="torch.cudnn_incompatible",
        pattern=r"cuDNN version incompatibility: PyTorch was compiled\s+against (?P<want>\([\d, ]+\)) but (?:found runtime|linked against) (?:version )?(?P<have>\([\d, ]+\))",
        cause="a cuDNN {have} other than the one torch was built with {want} is loaded first (a system cuDNN on LD_LIBRARY_PATH)",
        cause_id="system_lib_shadows_wheel",
        check="torch.nvidia_wheel_pins",
        fix="Remove the system CUDA/cuDNN directories from LD_LIBRARY_PATH (unset LD_LIBRARY_PATH) so torch loads the libraries it ships",
        ask="`echo $LD_LIBRARY_PATH` and `pip list | grep nvidia`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.system_cuda_lib_shadows",
        pattern=r"(?P<lib>lib(?:cudnn\w{0,20}|cublas\w{0,20}|cusparse|nvJitLink|nccl|cufft|cusolver)[\w.]{0,100}) => (?P<path>/(?:usr/local/cuda|opt/conda/lib|usr/lib)[\w./-]{0,300})"
        r"|(?P<path2>/usr/local/cuda[\w.-]{0,40}/(?:lib64|targets)/[\w./-]{0,300}lib(?:cudnn|cublas|cusparse|nvJitLink|nccl)[\w.]{0,100}): undefined symbol",
        cause="a CUDA library from a system toolkit ({path}{path2}) is loaded instead of the one torch's nvidia-* wheels ship: LD_LIBRARY_PATH puts the toolkit first",
        cause_id="system_lib_shadows_wheel",
        check="torch.nvidia_wheel_pins",
        fix="Remove the CUDA toolkit directories from LD_LIBRARY_PATH (unset LD_LIBRARY_PATH) so torch's own CUDA libraries load",
        ask="`echo $LD_LIBRARY_PATH` and `ldd` of the library that fails",
    ),
    _S(
        id="torch.torchaudio_symbol",
        pattern=r"(?:torchaudio[/\\][\w/\\.-]{0,300}|_torch_sox[\w.-]*)\.(?:so|pyd)[^\n]{0,300}?undefined symbol"
        r"|Detected that PyTorch and TorchAudio were compiled with different CUDA versions",
        cause="torchaudio's compiled library was built for another torch (release or CUDA variant) than the one installed",
        cause_id="torchaudio_torch_mismatch",
        check="torch.extension_abi",
        fix="Install the torchaudio release that pairs with this torch, from the same index: pip install --force-reinstall torch==<your torch> torchaudio",
        ask="`pip list | grep -E 'torch|torchaudio'`",
        ask_facts=("dists",),
    ),
    # --- shadowed or doubled NVIDIA libraries, torchvision's CUDA, Windows DLLs, CPU builds (issue 25) ----
    _S(
        id="torch.cuda_symbol_too_new",
        pattern=r"undefined symbol:? (?P<symbol>__nvJitLink\w{1,80}?_1\d_\d{1,2}\b|cupti\w{1,80}(?=, version libcupti))(?:, version (?P<lib>lib\w{1,40}\.so\.\d{1,3}))?",
        cause="the libnvJitLink/libcupti loaded first is older than the one torch's CUDA libraries need (undefined symbol {symbol}): "
        "a CUDA toolkit's or conda's copy (/usr/local/cuda*/lib64, /opt/conda/lib), found through LD_LIBRARY_PATH, shadows the nvidia-* wheel's",
        cause_id="system_lib_shadows_wheel",
        check="torch.nvidia_wheel_pins",
        fix="Remove the CUDA toolkit and conda lib directories from LD_LIBRARY_PATH (unset LD_LIBRARY_PATH) so torch's own nvidia-* libraries load; "
        "`LD_DEBUG=libs python -c 'import torch' 2>&1 | grep -E 'nvJitLink|cupti'` shows which copy is loaded",
        ask="`echo $LD_LIBRARY_PATH`, `pip list | grep nvidia` and `ldd` of the library that fails",
        ask_facts=("dists",),
    ),
    _S(
        id="build.cudart_symbol_too_new",
        pattern=r"undefined symbol:? (?P<symbol>cuda[A-Z]\w{1,80}), version libcudart\.so\.(?P<major>1\d)",
        cause="a compiled package calls {symbol}, which the libcudart.so.{major} loaded does not have: it was compiled with a newer "
        "CUDA {major} toolkit (nvcc) than the CUDA runtime it runs with (torch's nvidia-cuda-runtime wheel, or a system copy on "
        "LD_LIBRARY_PATH)",
        cause_id="toolkit_torch_cuda_mismatch",
        check="toolchain.nvcc",
        fix="Build the package with the nvcc of torch's CUDA (CUDA_HOME=/usr/local/cuda-<torch's CUDA>), or install a torch built "
        "for the newer CUDA (pip install torch --index-url https://download.pytorch.org/whl/cu<XY>), so nvcc and runtime agree",
        ask="`nvcc --version`, `pip list | grep -E 'torch|nvidia-cuda-runtime'` and `echo $LD_LIBRARY_PATH`",
        ask_facts=("dists", "cuda_toolkit"),
    ),
    _S(
        id="torch.nccl_symbol",
        pattern=r"undefined symbol:? (?P<symbol>nccl[A-Z]\w{1,80})",
        cause="the NCCL loaded (libnccl.so.2) is older than the one torch was built with (undefined symbol {symbol}): a second nvidia-nccl wheel "
        "(cu11 beside cu12, cu12 beside cu13) or another package's NCCL pin shadows torch's",
        cause_id="nvidia_pip_lib_mismatch",
        check="torch.nvidia_wheel_pins",
        fix="Keep one NCCL, the one torch pins: pip uninstall the other nvidia-nccl-cuXX wheel, then pip install --force-reinstall torch==<your torch>; "
        "unset LD_LIBRARY_PATH if it names a system NCCL",
        ask="`pip list | grep -i -E 'torch|nccl'` and `echo $LD_LIBRARY_PATH`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.cudnn_sublibrary_mismatch",
        pattern=r"CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH",
        cause="cuDNN's sub-libraries are loaded from different cuDNN versions (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH): a system or LD_LIBRARY_PATH "
        "cuDNN 9 supplies some of them beside the nvidia-cudnn wheel's",
        cause_id="system_lib_shadows_wheel",
        check="torch.nvidia_wheel_pins",
        fix="Find the stray copy (`LD_DEBUG=libs python your_script.py 2>&1 | grep 'calling init:.*cudnn'`), remove its directory from LD_LIBRARY_PATH "
        "or the system cuDNN package (apt remove 'libcudnn9*'), and keep one nvidia-cudnn-cuXX wheel, the one torch pins",
        ask="`echo $LD_LIBRARY_PATH`, `ldconfig -p | grep cudnn` and `pip list | grep -i -E 'torch|cudnn'`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.torchvision_cuda",
        pattern=r"PyTorch and torchvision were compiled with different\s{1,10}CUDA\s{1,10}(?:major\s{1,10})?versions",
        cause="torchvision was built for another CUDA than the installed torch (one of them from another index, or torchvision built from source "
        "against a system CUDA toolkit)",
        cause_id="torchvision_torch_mismatch",
        check="torch.extension_abi",
        fix="Install torch and torchvision together from torch's CUDA index: pip install --force-reinstall torch==<your torch> torchvision "
        "--index-url https://download.pytorch.org/whl/cu<XY>",
        ask="`pip list | grep -E 'torch|torchvision'`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.deserialize_without_cuda",
        pattern=r"Attempting to deserialize object on a CUDA\s{1,10}device but torch\.cuda\.is_available\(\) is False",
        cause="torch.load was given a checkpoint saved on a GPU and CUDA is not available to this torch: on a GPU machine most often a CPU-only "
        "torch build (on a machine without an NVIDIA GPU, load with map_location='cpu')",
        cause_id="cpu_torch_on_gpu_machine",
        check="torch.cpu_build_on_gpu_machine",
        fix="Check torch.__version__ (a +cpu or conda *_cpu_* build has no CUDA) and install a CUDA build: pip install --force-reinstall torch "
        "--index-url https://download.pytorch.org/whl/cu128 (pick the CUDA your driver supports); without a GPU use torch.load(..., map_location='cpu')",
        ask="`pip list | grep torch` and `nvidia-smi`",
        ask_facts=("dists", "driver", "gpus"),
    ),
    _S(
        id="conda.cpu_variant_for_cuda",
        # conda's CPU variant (a "+cpu"/"_cpu_0" build, the cpu-only or pytorch-mutex cpu package) after a CUDA toolkit
        # was asked for in the same paste: the command, or the plan's cudatoolkit line (plans are sorted by name)
        # (the window stops at the next toolkit word, so windows never overlap: linear in the paste)
        pattern=r"\b(?:cudatoolkit|pytorch-cuda)\b(?:(?!\b(?:cudatoolkit|pytorch-cuda)\b)[\s\S]){0,2000}?(?P<pkg>(?:py)?torch(?:-nightly)?-\d[\w.]{0,40}\+cpu\S{0,60}"
        r"|(?:py)?torch(?:-nightly)?[ \t]{1,40}\d[\w.+]{0,40}[ \t]{1,40}\S{0,40}_cpu_\d{1,3}\b|cpu-only-\d\S{0,20}"
        r"|pytorch-mutex-1\.0-cpu|pytorch-mutex[ \t]{1,40}1\.0[ \t]{1,40}cpu\b)",
        cause="conda resolved the CPU-only pytorch variant ({pkg}) although a CUDA toolkit was asked for: no CUDA package matched that "
        "Python, CUDA and channel, so the solver fell back to the CPU build",
        cause_id="cpu_torch_on_gpu_machine",
        check="torch.cpu_build_on_gpu_machine",
        fix="Install the CUDA variant explicitly (conda remove cpuonly first): conda install pytorch pytorch-cuda=<X.Y> -c pytorch -c nvidia, "
        "or pip install torch --index-url https://download.pytorch.org/whl/cu<XY>",
        ask="`conda list | grep -E 'pytorch|cuda|cpuonly'` and `nvidia-smi`",
        ask_facts=("dists", "driver", "gpus"),
    ),
    # --- end of the issue-25 block ---------------------------------------------------------
    _S(
        id="torch.nvidia_lib_symbol",
        pattern=r"(?P<lib>lib(?:cusparse|cublas\w{0,20}|cudnn\w{0,20}|nccl|nvJitLink|cufft|curand|cusolver)[\w.]{0,100})[^\n]{0,1000}undefined symbol: (?P<symbol>\S+)",
        cause="the NVIDIA CUDA libraries loaded do not match each other or torch ({lib}: undefined symbol {symbol}): mixed nvidia-* wheel versions "
        "or a system CUDA on LD_LIBRARY_PATH shadowing torch's own",
        cause_id="nvidia_pip_lib_mismatch",
        check="torch.nvidia_wheel_pins",
        fix="Unset LD_LIBRARY_PATH and retry; if it persists reinstall torch with its pinned CUDA libraries: pip install --force-reinstall torch==<your torch>",
        ask="`pip list | grep nvidia` and `echo $LD_LIBRARY_PATH`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.torchvision_symbol",
        pattern=r"torchvision[/\\][\w/\\.-]{0,300}\.(?:so|pyd)[^\n]{0,1000}undefined symbol: (?P<symbol>\S+)",
        cause="torchvision's compiled operators were built for another torch (undefined symbol {symbol})",
        cause_id="torchvision_torch_mismatch",
        check="torch.extension_abi",
        fix="Install the torchvision release that pairs with this torch: pip install --force-reinstall torch==<your torch> torchvision",
        ask="`pip list | grep -E 'torch|torchvision'`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.extension_built_for_cpu_torch",
        pattern=r"built for:?\s*PyTorch (?P<want>\S+) with CUDA (?P<cuda>\S+) \(you have (?P<have>[\w.]+\+cpu)\)",
        cause="the extension was built for the CUDA torch {want} but a CPU-only torch ({have}) is installed",
        cause_id="cpu_torch_on_gpu_machine",
        check="torch.cpu_build_on_gpu_machine",
        fix="Install the CUDA build of torch the extension was built for: pip install --force-reinstall torch=={want} --index-url https://download.pytorch.org/whl/cu<XY>",
    ),
    _S(
        id="torch.extension_built_for_other_torch",
        pattern=r"(?:built for:?\s*)?PyTorch (?P<want>\S+)(?: with CUDA (?P<cuda>\S+))? \(you have (?P<have>\S+)\)",
        cause="the extension was built for torch {want} but torch {have} is installed",
        cause_id="extension_abi_mismatch",
        check="torch.extension_abi",
        fix="Install the extension's build for torch {have}, or torch {want}",
    ),
    _S(
        id="xformers.ops_not_built",
        # every operator refused for the same reason: its compiled ops did not load (the "build" typo is xFormers' own)
        pattern=r"xFormers wasn't build with CUDA support",
        cause="xFormers' compiled CUDA operators did not load: the xformers wheel was built for another torch or CUDA than the one "
        "installed (or is a build without CUDA), so memory_efficient_attention finds no operator",
        cause_id="extension_abi_mismatch",
        check="torch.extension_abi",
        fix="Install the xformers build made for this torch from torch's index: pip install -U xformers==<the release for your torch> "
        "--index-url https://download.pytorch.org/whl/cu<XY> --no-deps (python -m xformers.info shows what it was built for); "
        "or uninstall xformers where it is optional",
        ask="`python -m xformers.info` and `pip list | grep -E 'torch|xformers'`",
        ask_facts=("dists",),
    ),
    _S(
        id="xla.xlac_symbol",
        pattern=r"_XLAC[\w.-]{0,60}\.so: undefined symbol: (?P<symbol>\S+)",
        cause="torch_xla's compiled library was built for another torch release than the installed one (undefined symbol {symbol})",
        cause_id="xla_torch_mismatch",
        check="xla.torch_match",
        fix="Install the torch_xla release of this torch (torch==X.Y.* with torch_xla==X.Y.*), or the torch it was built for",
        ask="`pip list | grep -E 'torch|libtpu'`",
        ask_facts=("dists",),
    ),
    _S(
        id="rocm.no_devices",
        pattern=r"Could not initialize Tensile host: No devices found|No HIP GPUs are available",
        cause="the ROCm runtime sees no GPU it supports: the GPU's gfx target is not among the build's (an older Radeon, a new one "
        "before its ROCm release), or /dev/kfd and /dev/dri are not reachable (a container without them, a user outside the "
        "render and video groups)",
        cause_id="rocm_no_device",
        check="torch.rocm_gfx_support",
        fix="Check rocminfo lists the GPU (a supported gfx target, or HSA_OVERRIDE_GFX_VERSION for a close one); in Docker pass "
        "--device=/dev/kfd --device=/dev/dri --group-add video; add the user to the render and video groups",
        ask="the output of `rocminfo | grep -E 'Name|gfx'` and `ls -l /dev/kfd /dev/dri`",
    ),
    _S(
        id="torch.extension_abi",
        pattern=_SO + r": undefined symbol: (?P<symbol>_Z\S+)",
        cause="the compiled extension {module} was built for another torch (undefined symbol {symbol}): torch was upgraded or swapped after it was installed",
        cause_id="extension_abi_mismatch",
        check="torch.extension_abi",
        fix="Reinstall the extension for this torch: a wheel built for it, or a rebuild: pip install --no-build-isolation --no-cache-dir --force-reinstall <package>",
        ask="`pip list` (torch and the extension's versions) and how the extension was installed (wheel, source build)",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.undefined_torch_symbol",
        pattern=r"undefined symbol:? (?P<symbol>_ZNK?(?:5torch|3c10|2at)\w{1,300})",
        cause="a compiled package was built for another torch (undefined symbol {symbol}, one of torch's own C++ symbols): torch "
        "was upgraded or swapped after the package was installed; the paste does not show which package's library failed",
        cause_id="extension_abi_mismatch",
        check="torch.extension_abi",
        fix="Reinstall the package that fails for this torch (a wheel built for it, or pip install --no-build-isolation "
        "--force-reinstall <package>); the full error's .so path names it",
        ask="the full error line (its .so path names the package) and `pip list` (torch and that package's versions)",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.torchvision_nms",
        pattern=r"operator torchvision::nms does not exist",
        cause="torchvision's compiled operators do not match the installed torch (torchvision built for another torch release)",
        cause_id="torchvision_torch_mismatch",
        check="torch.extension_abi",
        fix="Install the torchvision that matches torch (the same release line): pip install --force-reinstall torch==<your torch> torchvision",
    ),
    _S(
        id="windows.paging_file",
        # Windows' ERROR_COMMITMENT_LIMIT while torch maps its CUDA DLLs (each DataLoader worker
        # maps them again): a translation keeps the error number
        pattern=r"\[WinError 1455\]|The paging file is too small for this operation to complete",
        cause="Windows ran out of commit memory while loading torch's CUDA DLLs (WinError 1455): the paging file is too small for this "
        "process and its DataLoader workers, each of which maps the DLLs again",
        cause_id="windows_paging_file_too_small",
        check="system.resources",
        fix="Let Windows manage the paging file size (System > Advanced system settings > Performance > Virtual memory) or enlarge it, "
        "and lower num_workers; a reboot applies the change",
        ask="the size of RAM and of the paging file, and the DataLoader's num_workers",
    ),
    _S(
        id="windows.dll_conflict",
        # Windows' "The operating system cannot run %1" as the loader prints it, in the system's language
        pattern=r"DLL load failed[^\n]{0,80}?(?:The operating system cannot run|操作系统无法运行|O sistema operacional não pode executar"
        r"|Операционная система не может запустить)\s{0,2}%1",
        cause="Windows loaded a conflicting copy of a DLL torch needs (often the OpenMP runtime libiomp5md.dll or the MSVC runtime) "
        "from another program's directory on PATH or another package in the environment",
        cause_id="library_shadowing",
        check="torch.importable",
        fix="Find the DLL loaded from elsewhere (Process Monitor, or `where libiomp5md.dll`): remove that directory from PATH, or reinstall the "
        "package that brought it (a conda-forge build of another library) from the channel torch came from",
        ask="`where libiomp5md.dll`, the PATH, and `conda list` or `pip list`",
    ),
    _S(
        id="torch.windows_dll",
        pattern=r"\[WinError 126\][^\n]{0,400}?Error loading \"[^\"\n]{0,300}\.dll\" or one of its dependencies|Error loading \"[^\"\n]{0,300}(?:fbgemm|c10|torch_cpu|torch_python|shm)\.dll\""
        r"|\[WinError 126\] The specified module could not be found"
        r"|Error loading\s{1,80}\"[^\"\n]{0,300}\.dll\"\s{1,80}or one of its dependencies"
        # the same named in prose or a title: "error loading fbgemm.dll", "fbgemm.dll missing", a dependency tool's "libomp140.x86_64.dll MISSING"
        r"|(?:error loading|could not load|cannot load|can't load|failed to load|unable to load)[ \t]{1,4}[\"'`]?(?:[^\s\"'`]{0,300}[/\\])?"
        r"(?:fbgemm|c10|torch_cpu|torch_python|libomp140\.x86_64)\.dll"
        r"|(?:fbgemm|c10|torch_cpu|torch_python|libomp140\.x86_64)\.dll[\"'`]?[ \t]{0,3}(?:is[ \t])?(?:missing|not found)",
        cause="a DLL torch loads on Windows, or one of its dependencies (the MSVC runtime, libomp), is missing",
        cause_id="windows_dll_dependency_missing",
        check="torch.importable",
        fix="Install the latest Microsoft Visual C++ Redistributable (x64); for torch 2.4 on Windows the missing dependency was libomp140.x86_64.dll, "
        "fixed in later releases: upgrade torch",
        ignore_case=True,
        ask="`pip list | grep torch`, `python -VV` and whether the Microsoft Visual C++ Redistributable (x64) is installed",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.cublas_path",
        pattern=r"(?P<lib>lib\w{1,60})\.so\.\*\[0-9\] not found in the system path",
        cause="{lib} from the nvidia-* wheels torch depends on is not installed (an installer that skipped torch's CUDA dependencies)",
        cause_id="nvidia_lib_missing",
        check="torch.importable",
        fix="Reinstall torch with its dependencies (no --no-deps): pip install --force-reinstall torch==<your torch>; avoid torch 2.0.1/2.1.0 with poetry",
        ask="`pip list | grep -i -E 'torch|nvidia'` and how torch was installed",
        ask_facts=("dists",),
    ),
    _S(
        id="wsl.libcuda",
        pattern=r"/usr/lib/wsl/lib/libcuda\.so\.1 is not a symbolic link|Failed to dlopen libcuda\.so|libcuda\.so(?:\.1)?: cannot open shared object file",
        cause="the CUDA driver library libcuda.so is not found through the loader's search path (on WSL it lives in /usr/lib/wsl/lib)",
        cause_id="libcuda_not_found",
        check="triton.libcuda",
        fix="Refresh the loader cache (sudo ldconfig; on WSL recreate libcuda.so.1 and libcuda.so as links to libcuda.so.1.1 in /usr/lib/wsl/lib), "
        "or export LD_LIBRARY_PATH=/usr/lib/wsl/lib:$LD_LIBRARY_PATH",
        ask="`ldconfig -p | grep libcuda` and `ls -l /usr/lib/wsl/lib/libcuda*`",
        ask_facts=("ldconfig",),
    ),
    _S(
        id="system.libstdcxx",
        pattern=r"libstdc\+\+\.so\.6: version `?(?P<want>(?:GLIBCXX|CXXABI)_[\d.]+)'? not found",
        cause="the libstdc++ loaded first is older than a binary needs ({want}): a system or conda libstdc++ shadows a newer one",
        cause_id="libstdcxx_too_old",
        check="system.os",
        fix="Load the newer libstdc++: in conda install it into the environment (conda install -c conda-forge libstdcxx-ng) and check that "
        "$CONDA_PREFIX/lib/libstdc++.so.6 exists; outside conda, upgrade the OS's libstdc++",
        ask="`strings $(g++ -print-file-name=libstdc++.so.6) | grep GLIBCXX | tail -3` and whether this runs in conda",
    ),
    _S(
        id="build.toolkit_mismatch",
        pattern=r"The detected CUDA version \((?P<have>[\d.]+)\) mismatches the version that was used to compile\s+PyTorch \((?P<torch>[\d.]+)\)",
        cause="the CUDA toolkit (nvcc {have}) that builds the extension differs from the CUDA torch was built with ({torch})",
        cause_id="toolkit_torch_cuda_mismatch",
        check="toolchain.nvcc",
        fix="Build with a toolkit of torch's CUDA major.minor (point CUDA_HOME at it), or install the torch build for CUDA {have}",
        ask=ASK_TOOLKIT,
        ask_facts=("cuda_toolkit",),
    ),
    _S(
        id="build.deepspeed_toolkit_mismatch",
        pattern=r"Installed CUDA version (?P<have>\d{1,2}\.\d{1,2}) does not match the version torch was compiled with (?P<torch>\d{1,2}\.\d{1,2})",
        cause="the CUDA toolkit (nvcc {have}) that builds DeepSpeed's ops differs from the CUDA torch was built with ({torch})",
        cause_id="toolkit_torch_cuda_mismatch",
        check="toolchain.nvcc",
        fix="Build with a toolkit of torch's CUDA (CUDA_HOME=/usr/local/cuda-{torch}), or install the torch build for CUDA {have}; "
        "DS_SKIP_CUDA_CHECK=1 allows a minor-version difference at your own risk",
        ask=ASK_TOOLKIT,
        ask_facts=("cuda_toolkit",),
    ),
    _S(
        id="build.apex_toolkit_mismatch",
        pattern=r"Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile "
        r"Pytorch binaries\.\s{1,4}Pytorch binaries were compiled with Cuda (?P<torch>\d{1,2}\.\d{1,2})",
        cause="the CUDA toolkit (nvcc) that builds the extension differs from the CUDA torch was built with ({torch})",
        cause_id="toolkit_torch_cuda_mismatch",
        check="toolchain.nvcc",
        fix="Build with a toolkit of CUDA {torch} (CUDA_HOME=/usr/local/cuda-{torch}, its bin first on PATH), or install the torch build "
        "for the toolkit you have",
        ask=ASK_TOOLKIT,
        ask_facts=("cuda_toolkit",),
    ),
    _S(
        id="build.toolkit_too_old",
        pattern=r"FlashAttention is only supported on CUDA (?P<need>\d{1,2}(?:\.\d{1,2})?) and above",
        cause="the CUDA toolkit (nvcc) that builds flash-attn is older than CUDA {need}: the build checks nvcc's version, not torch's",
        cause_id="cuda_toolkit_too_old",
        check="toolchain.nvcc",
        fix="Put a CUDA toolkit of {need} or later (best: torch's own CUDA) first: export CUDA_HOME=/usr/local/cuda-<X.Y> "
        "PATH=$CUDA_HOME/bin:$PATH, or install a prebuilt flash-attn wheel for your torch and CUDA",
        ask="`nvcc --version`, `which nvcc` and `python -c 'import torch; print(torch.version.cuda)'`",
        ask_facts=("cuda_toolkit",),
    ),
    _S(
        id="build.cuda_home_missing",
        pattern=r"CUDA_HOME does not exist, unable to compile CUDA op|MissingCUDAException|CUDA_HOME environment variable is not set"
        r"|No such file or directory: '[^'\n]{0,200}/bin/nvcc'|(?:sh|bash): (?:\d{1,4}: )?nvcc: (?:command )?not found",
        cause="no CUDA toolkit (nvcc) was found to compile CUDA ops: CUDA_HOME is unset and no toolkit is installed",
        cause_id="cuda_toolkit_missing",
        check="toolchain.nvcc",
        fix="Install a CUDA toolkit matching torch's CUDA and export CUDA_HOME=/usr/local/cuda-<X.Y>, or install a prebuilt wheel that needs no compilation",
        ask=ASK_TOOLKIT,
        ask_facts=("cuda_toolkit",),
    ),
    _S(
        id="build.cuda_headers_missing",
        pattern=r"fatal error: (?P<header>cuda_runtime(?:_api)?\.h|cuda\.h|cublas_v2\.h|cusparse\.h|curand\.h|cuda_fp16\.h): No such file or directory",
        cause="the CUDA toolkit's headers ({header}) are not found where the extension is compiled: no toolkit is installed (a driver or the "
        "pip CUDA runtime brings none), or CUDA_HOME points elsewhere",
        cause_id="cuda_toolkit_missing",
        check="toolchain.nvcc",
        fix="Install a CUDA toolkit matching torch's CUDA (conda install -c nvidia cuda-toolkit=<X.Y>, or NVIDIA's installer) and export "
        "CUDA_HOME=<its root>, so <CUDA_HOME>/include holds {header}",
        ask=ASK_TOOLKIT,
        ask_facts=("cuda_toolkit",),
    ),
    _S(
        id="build.nvcc_arch",
        pattern=r"nvcc fatal\s{0,4}:?\s{0,4}Unsupported gpu architecture '(?P<arch>compute_\w+)'",  # as nvcc prints it, or retyped
        ignore_case=True,
        cause="the nvcc used for the build does not know {arch}: the CUDA toolkit is too old for that GPU, or too new for an arch it dropped",
        cause_id="nvcc_arch_unsupported",
        check="toolchain.nvcc",
        fix="Use a CUDA toolkit that supports {arch} (new GPUs need a newer toolkit; CUDA 12 dropped compute_35/37), or drop it from TORCH_CUDA_ARCH_LIST",
        ask="`nvcc --version` and the value of TORCH_CUDA_ARCH_LIST",
        ask_facts=("cuda_toolkit",),
    ),
    _S(
        id="build.unknown_arch",
        pattern=r"Unknown CUDA arch \((?P<arch>[^)\n]{1,40})\) or GPU not supported",
        cause="the torch building the extension predates CUDA arch {arch} (its cpp_extension does not know it), or TORCH_CUDA_ARCH_LIST names it",
        cause_id="extension_arch_unknown_to_torch",
        check="torch.arch_support",
        fix="Build against a torch (and CUDA toolkit) released after the GPU, or set TORCH_CUDA_ARCH_LIST to arches this torch knows",
        ask="the torch version and the value of TORCH_CUDA_ARCH_LIST",
    ),
    _S(
        id="torch.cuda_runtime_other_major",
        pattern=r"(?P<lib>lib(?:cudart|cublas|cublasLt|nvrtc|nvJitLink)\.so\.(?P<major>1\d))(?:\.\d{1,3})?\b[^\n]{0,40}"
        r"(?:cannot open shared object file|required|not found|No such file)|linked against (?P<lib2>lib(?:cudart|cublas|cublasLt|nvrtc|nvJitLink)\.so\.1\d)",
        cause="a compiled package needs {lib}{lib2}, another CUDA major's runtime than torch's: it was built for another CUDA than "
        "the installed torch (a CUDA 13 wheel beside a CUDA 12 torch, or the reverse)",
        cause_id="extension_abi_mismatch",
        check="torch.extension_abi",
        fix="Install the package's build for torch's CUDA (its cu12 or cu13 wheel, or its own index for that CUDA), or the torch "
        "of the package's CUDA: pip install torch --index-url https://download.pytorch.org/whl/cu<XY>",
        ask="`pip list | grep -E 'torch|nvidia'` and the package's install command",
        ask_facts=("dists",),
        confirm=True,
    ),
    _S(
        id="torch.cuda_lib_missing",
        pattern=r"(?P<lib>lib(?:cudnn|cublas\w{0,20}|nccl|cusparse\w{0,20}|cufft|curand|cusolver|nvJitLink|cudart|nvrtc|cupti)[\w.]{0,100}): cannot open shared object file"
        r"|Unable to load any of \{(?P<lib2>lib(?:cudnn|cublas)\w{0,20}\.so[\w.]{0,20})",
        cause="{lib} is missing: torch's CUDA libraries (the nvidia-* pip packages) are not installed where torch looks for them",
        cause_id="nvidia_lib_missing",
        check="torch.importable",
        fix="pip install --force-reinstall torch==<your torch> without --no-deps; on RHEL-like systems check that purelib and platlib are the same directory",
        ask="`pip list | grep -i -E 'torch|nvidia'` and how torch was installed",
        ask_facts=("dists",),
    ),
    _S(
        id="toolchain.libgomp",
        pattern=r"libgomp\.so\.1: cannot open shared object file",
        cause="libgomp (OpenMP), which torch needs, is not installed",
        cause_id="libgomp_missing",
        check="toolchain.libgomp",
        fix="apt-get install libgomp1 (dnf install libgomp)",
    ),
    _S(
        id="toolchain.libomp_macos",
        pattern=r"Library not loaded: '?(?:/usr/local|/opt/homebrew)/opt/libomp/lib/libomp\.dylib|Library not loaded: @rpath/libomp\.dylib",
        cause="the OpenMP runtime (libomp.dylib) a macOS build of torch links is not installed",
        cause_id="libgomp_missing",
        check="toolchain.libgomp",
        fix="brew install libomp (in conda: conda install -c conda-forge llvm-openmp), or install a torch release that bundles it",
    ),
    _S(
        id="system.glibc",
        pattern=r"version [`'‘\"](?P<glibc>GLIBC_[\d.]{1,20})['’\"] not found",  # as the loader prints it, or retyped
        cause="the C library is older than a binary needs ({glibc})",
        cause_id="glibc_too_old",
        check="system.os",
        fix="Use a base image or OS with a newer glibc (torch wheels need glibc >= 2.28), or install a build made for this glibc",
    ),
    _S(
        id="torch.numpy_abi",
        pattern=r"A module that was compiled using NumPy 1\.x cannot be run in\s{1,40}NumPy 2|_ARRAY_API not found|Numpy is not available",
        cause="a module compiled against NumPy 1.x is imported with NumPy 2 installed",
        cause_id="numpy_abi",
        check="torch.numpy_abi",
        fix="pip install 'numpy<2', or upgrade the package compiled against NumPy 1.x (and torch < 2.3) to a NumPy 2 build",
        ask="`pip list | grep -i -E 'numpy|torch'`",
        ask_facts=("dists",),
    ),
    # --- driver and GPU --------------------------------------------------------------------
    _S(
        id="gpu.below_required_cc",
        pattern=r"FlashAttention only supports Ampere GPUs or newer|FlashInfer requires GPUs with sm75 or higher"
        r"|Bfloat16 is only supported on GPUs with compute capability of at least 8\.0|GPUs with compute capability below 7\.0 are not supported"
        r"|The quantization method [\w-]{1,40} is not supported for the current GPU\. Minimum capability: \d{2,3}\. Current capability: \d{2,3}"
        r"|requires device with capability [>=]{1,2} \(\d{1,2}, \d\) but your GPU has capability \(\d{1,2}, \d\) \(too old\)",
        cause="the GPU's compute capability is below what this kernel needs ({0})",
        cause_id="gpu_below_required_cc",
        check="nvidia.gpus",
        fix="Run on a GPU of the required compute capability, or avoid the kernel: float16 instead of bfloat16 below 8.0 (--dtype=half), "
        "attn_implementation='sdpa' instead of FlashAttention 2 on Turing/Volta",
        ignore_case=True,
        ask="`nvidia-smi` (the GPU model)",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="torch.gpu_too_old",
        pattern=r"Found GPU ?%?\w* ?(?P<gpu>[^\n]{0,80}?) which is of cuda capability (?P<cc>[\d.%d]+)[\s\S]{0,80}?PyTorch no longer supports this GPU because it is too old"
        r"|PyTorch no longer supports this GPU because it is too old",
        cause="the GPU {gpu} (compute capability {cc}) is older than the oldest architecture this torch build carries",
        cause_id="arch_not_in_torch_build",
        check="torch.arch_support",
        fix="Use an older torch release that still supports this GPU, build torch from source for it, or use a newer GPU",
        ask="`nvidia-smi` and the torch version",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="torch.supported_archs",
        pattern=r"The current PyTorch install supports CUDA capabilities (?P<archs>sm_\d+(?: sm_\d+| compute_\d+){0,20})",
        cause="the GPU's architecture is not among those this torch build carries ({archs})",
        cause_id="arch_not_in_torch_build",
        check="torch.arch_support",
        fix="Install a torch build whose arch list includes the GPU (a newer CUDA build for new GPUs, an older torch for old GPUs)",
        ask="`nvidia-smi` (the GPU) and the torch version",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="rocm.pcie_atomics",
        pattern=r"PCI rejects atomics",
        cause="the AMD GPU's PCIe path does not pass PCIe atomics (a chipset slot, a PCIe switch, riser or extender, or a CPU "
        "without them), so ROCm's kfd skips the GPU",
        cause_id="pcie_atomics_unsupported",
        check="torch.rocm_gfx_support",
        fix="Move the GPU to a slot wired to the CPU (not the chipset), without a riser or switch, on a platform with PCIe atomics "
        "(Haswell or Zen and later); dmesg | grep kfd shows which GPUs kfd added and which it skipped",
        ask="`dmesg | grep -i kfd`, `lspci -tv` and the CPU and motherboard model",
    ),
    _S(
        id="rocm.no_code_object",
        pattern=r"hipErrorNoBinaryForGpu|HIP error: invalid device function|TensileLibrary(?:_\w+)?\.dat[^\n]{0,80}(?:not found|No such file|Illegal seek)"
        r"|Cannot read [^\n]{0,200}TensileLibrary\.dat|HSA_STATUS_ERROR_INVALID_ISA",
        cause="the ROCm build has no code objects for this AMD GPU's gfx target (the GPU is not among the targets ROCm/torch were built for)",
        cause_id="rocm_gfx_unsupported",
        check="torch.arch_support",
        fix="Use a GPU ROCm supports, or make it report a supported target of the same family: export HSA_OVERRIDE_GFX_VERSION=10.3.0 (RDNA2), "
        "11.0.0 (RDNA3); or install a torch/ROCm build that includes the gfx target",
        ask="`rocminfo | grep gfx` and `python -c 'import torch; print(torch.__version__, torch.version.hip)'`",
    ),
    _S(
        id="docker.no_gpu_runtime",
        pattern=r"could not select device driver \"[^\"\n]{0,40}\" with capabilities: \[\[gpu\]\]|The NVIDIA Driver was not detected\.\s+GPU functionality will not be available"
        r"|unknown or invalid runtime name: nvidia",
        cause="the container was started without the NVIDIA runtime (the NVIDIA Container Toolkit is not installed or docker is not configured for it)",
        cause_id="container_toolkit_missing",
        check="nvidia.driver",
        fix="Install the NVIDIA Container Toolkit, run sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker, "
        "and start the container with --gpus all",
        ask="`nvidia-smi` on the host and `docker info | grep -i runtime`",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="docker.nvml_unknown",
        pattern=r"Failed to initialize NVML: Unknown Error",
        cause="the container lost access to the GPU device nodes (systemd reloaded the cgroup device rules after the container started)",
        cause_id="container_lost_gpu_access",
        check="nvidia.driver",
        fix="Restart the container; to prevent it, use the cgroupfs cgroup driver or CDI device injection (nvidia-ctk cdi generate), "
        "per the NVIDIA Container Toolkit notice",
        ask="`docker info | grep -i cgroup` and whether `systemctl daemon-reload` ran",
    ),
    _S(
        id="nccl.shm_permission",
        pattern=r"shm_open failed\s*:\s*Permission denied",
        cause="NCCL cannot create its shared-memory segments: /dev/shm is not writable by this user",
        cause_id="shm_not_writable",
        check="system.shm",
        fix="Make /dev/shm writable (mode 1777) for the user running the job",
    ),
    _S(
        id="nccl.shm_segment",
        pattern=r"Error while creating shared memory segment|Call to posix_fallocate failed|ncclShmOpen",
        cause="NCCL cannot allocate its shared-memory segment in /dev/shm (Docker's default /dev/shm is 64 MiB)",
        cause_id="shm_too_small",
        check="system.shm",
        fix="Give the container more shared memory: docker run --shm-size=16g or --ipc=host (Kubernetes: an emptyDir with medium: Memory on /dev/shm)",
        ask="`df -h /dev/shm` inside the container",
        ask_facts=("shm",),
    ),
    _S(
        id="torch.open_files_limit",
        pattern=r"unable to open shared memory object[^\n]{0,200}Too many open files|Too many open files\. Communication with the workers "
        r"is no longer possible|received 0 items of ancdata",
        cause="the process ran out of file descriptors: torch.multiprocessing shares each tensor sent between processes (DataLoader "
        "workers) through one, and the open-files limit (ulimit -n) is lower than the job needs",
        cause_id="open_files_limit",
        check="system.resources",
        fix="Raise the open-files limit where the job starts (ulimit -n 65536; docker run --ulimit nofile=65536:65536; systemd "
        "LimitNOFILE=), or call torch.multiprocessing.set_sharing_strategy('file_system') before the DataLoader starts",
        ask="`ulimit -n` in the shell that starts the job",
    ),
    _S(
        id="nccl.p2p",
        pattern=r"CANNOT Access Peer Device",
        cause="GPU peer-to-peer access is blocked (IOMMU or PCIe ACS), which makes NCCL hang or fail",
        cause_id="p2p_blocked_by_iommu_acs",
        check="nvidia.p2p_consumer",
        fix="Disable PCIe ACS / VT-d (or boot with iommu=pt); as a workaround export NCCL_P2P_DISABLE=1",
        ask="`nvidia-smi topo -m` and `sudo lspci -vvv | grep ACSCtl`",
    ),
    _S(
        id="nccl.p2p_workaround",
        pattern=r"(?:work\w{0,4}|fix\w{0,4}|solv\w{0,3}|resolv\w{0,3}|workaround)[^\n]{0,80}NCCL_P2P_DISABLE\s{0,2}=\s{0,2}1"
        r"|NCCL_P2P_DISABLE\s{0,2}=\s{0,2}1[^\n]{0,60}(?:work\w{0,4}|fix\w{0,4}|solv\w{0,3}|help\w{0,3})"
        r"|(?:ncclAllReduce|AllReduce|all_reduce\w{0,10})[^\n]{0,40}(?:hangs?|deadlocks?|freezes?|stuck)\b",
        cause="collectives hang until GPU peer-to-peer is disabled: P2P between the GPUs is blocked (PCIe ACS or the IOMMU) ({0})",
        cause_id="p2p_blocked_by_iommu_acs",
        check="nvidia.p2p_consumer",
        fix="Disable PCIe ACS / VT-d in the BIOS or boot with iommu=pt (NCCL's troubleshooting guide, 'PCI Access Control Services'); "
        "NCCL_P2P_DISABLE=1 only works around it, at reduced speed",
        ignore_case=True,
        ask="`nvidia-smi topo -m`, `sudo lspci -vvv | grep ACSCtl` and the output with NCCL_DEBUG=INFO",
    ),
    _S(
        id="compile.dynamo_python",
        pattern=r"Dynamo is not supported on Python (?P<py>3\.\d+)\+?",
        cause="this torch's torch.compile (Dynamo) does not support Python {py}",
        cause_id="python_too_new_for_dynamo",
        check="compile.python_version",
        fix="Use a Python the torch release supports for torch.compile (3.12 needs torch >= 2.4, 3.13 needs >= 2.6), or upgrade torch",
    ),
    _S(
        id="torch.driver_too_old",
        pattern=r"The NVIDIA driver on your system is too old(?: \(found version (?P<found>\d+)\))?",
        cause="the NVIDIA driver is older than the CUDA this torch (or the extension being built) needs",
        cause_id="driver_too_old_for_torch_cuda",
        check="torch.driver_supports_cuda",
        fix="Upgrade the NVIDIA driver, or install a torch built for the driver's CUDA (e.g. pip install torch --index-url https://download.pytorch.org/whl/cu118)",
        ask="`nvidia-smi` (the driver version and its CUDA) and `python -c 'import torch; print(torch.__version__, torch.version.cuda)'`",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="torch.driver_insufficient",
        pattern=r"CUDA driver version is insufficient for CUDA runtime version|cudaErrorInsufficientDriver|CUDA_ERROR_INSUFFICIENT_DRIVER",
        cause="the NVIDIA driver is older than the CUDA runtime this program uses",
        cause_id="driver_too_old_for_torch_cuda",
        check="torch.driver_supports_cuda",
        fix="Upgrade the NVIDIA driver, or install a torch built for an older CUDA",
        ask="`nvidia-smi` and the torch version with its CUDA",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="torch.no_kernel_image",
        pattern=r"no kernel image is available(?: for execution on the device)?",
        cause="this torch (or extension) has no kernels for the GPU's architecture: the GPU is newer or older than the build's arch list",
        cause_id="arch_not_in_torch_build",
        check="torch.arch_support",
        fix="Install a torch build whose arch list includes the GPU (torch.cuda.get_arch_list()); for new GPUs use a build for the newest CUDA "
        "(e.g. --index-url https://download.pytorch.org/whl/cu128 or newer)",
        ask="`nvidia-smi` (the GPU) and `python -c 'import torch; print(torch.__version__, torch.cuda.get_arch_list())'`",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="torch.arch_not_compatible",
        pattern=r"with CUDA capability (?P<arch>sm_\d+\w?) is not compatible with the current PyTorch installation",
        cause="this torch build has no kernels for the GPU's architecture {arch}",
        cause_id="arch_not_in_torch_build",
        check="torch.arch_support",
        fix="Install a torch build that includes {arch} (a newer CUDA build for new GPUs, an older torch for old GPUs)",
    ),
    _S(
        id="torch.cuda_on_macos",
        # the match is one line (the evidence quoted): the other fact is looked for ahead of it
        pattern=r"Torch not compiled with CUDA enabled(?=[\s\S]{0,1500}?(?:OS: macOS|\bmacOS-1\d|Darwin Kernel))"
        r"|(?:OS: macOS|\bmacOS-1\d|Darwin Kernel)(?=[\s\S]{0,1500}?Torch not compiled with CUDA enabled)",
        cause="the code asks for CUDA on macOS, which has no CUDA: torch for macOS has none to offer (Apple GPUs are 'mps')",
        cause_id="no_cuda_on_macos",
        check="system.os",
        fix="Select the device instead of hard-coding 'cuda': torch.device('mps' if torch.backends.mps.is_available() else 'cpu') "
        "(or the project's --device mps / cpu option); no torch build brings CUDA to a Mac",
    ),
    _S(
        id="torch.not_compiled_with_cuda",
        pattern=r"Torch not compiled with CUDA enabled",
        cause="a CPU-only build of torch is installed",
        cause_id="cpu_torch_on_gpu_machine",
        check="torch.cpu_build_on_gpu_machine",
        fix="Install a CUDA build: pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/cu128 (pick the CUDA your driver supports)",
        ask="`pip list | grep torch` and `nvidia-smi`",
        ask_facts=("dists", "driver", "gpus"),
    ),
    _S(
        id="nvidia.no_driver",
        pattern=r"Found no NVIDIA driver on your system",
        cause="no NVIDIA driver reachable from this process (none installed, or the container was started without GPUs)",
        cause_id="cuda_not_available_driver",
        check="nvidia.driver",
        fix="Install the NVIDIA driver; in Docker start the container with --gpus all (NVIDIA Container Toolkit)",
        ask="`nvidia-smi` on the host and in the container",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="nvidia.driver_library_mismatch",
        pattern=r"Driver/library version mismatch|NVML_ERROR_LIB_RM_VERSION_MISMATCH"
        r"|NVRM: API mismatch: the client(?: '[^'\n]{1,60}' \(pid \d{1,8}\))?\s{1,40}(?:NVRM:\s{1,4})?has the version",  # the kernel's words
        cause="the NVIDIA kernel module and the user-space driver libraries differ (the driver was upgraded and the machine not rebooted)",
        cause_id="driver_library_mismatch",
        check="nvidia.driver_library_mismatch",
        fix="Reboot (or unload and reload the nvidia kernel modules)",
    ),
    _S(
        id="nvidia.driver_lacks_gpu",
        pattern=r"installed\s{1,4}(?:\[[ \d.]{1,20}\]\s{0,3})?(?:NVRM:\s{1,4})?in this system is not supported by the\s{1,40}"
        r"(?:\[[ \d.]{1,20}\]\s{0,3})?(?:NVRM:\s{1,4})?(?:NVIDIA\s)?(?P<drv>\d{3}\.\d{1,3}(?:\.\d{1,3})?)",
        cause="the NVIDIA driver {drv} does not support this GPU, so the kernel module leaves it uninitialised: a GPU newer than "
        "the driver, a legacy GPU a newer driver dropped, or a vGPU/GRID device that needs NVIDIA's GRID driver",
        cause_id="driver_lacks_gpu",
        check="nvidia.driver",
        fix="Install a driver branch that lists this GPU (NVIDIA's 'Supported NVIDIA GPU Products' for the release): a newer one "
        "for a new GPU, the legacy branch for an old one, the GRID driver for a vGPU",
        ask="`lspci -nn | grep -i nvidia` and `dmesg | grep NVRM`",
    ),
    _S(
        id="gpu.hardware_xid",
        pattern=r"\bXid(?: \(PCI:[0-9a-fA-F:.]{4,20}\):|:?) (?P<code>48|62|64|74|79|95|136|140|143|14[4-9]|150)\b",
        cause="the GPU reported Xid {code}, a hardware fault (its memory, board, PCIe link or NVLink): not the software",
        cause_id="gpu_hardware_fault",
        check="health.xid",
        fix="Run `envdoctor check` on the machine (health.xid names the fault and its remedy); reset the GPU or reboot, and if it "
        "recurs check power, cooling and seating and have the GPU replaced",
        ask="`nvidia-smi -q -d ECC,ROW_REMAPPER` and the rest of `dmesg | grep -i xid` (which GPU, how often)",
    ),
    _S(
        id="gpu.fallen_off_bus",
        pattern=r"has\s{1,40}(?:NVRM:\s{1,4})?fallen off the bus|uncorrectable ECC error encountered",
        cause="the GPU failed in hardware: it stopped answering on PCIe (fallen off the bus), or its memory returned an "
        "uncorrectable ECC error",
        cause_id="gpu_hardware_fault",
        check="health.xid",
        fix="Reboot the machine (power it off fully if the GPU stays missing); if it recurs, check power, cooling and seating "
        "and have the GPU replaced; `envdoctor check` reads the Xid and ECC counters",
        ask="`dmesg | grep -i -E 'xid|NVRM'` and `nvidia-smi -q -d ECC,ROW_REMAPPER`",
    ),
    _S(
        id="k8s.no_gpu_capacity",
        pattern=r"\d{1,5}/\d{1,5} nodes are available:[^\n]{0,300}?Insufficient nvidia\.com/gpu",
        cause="no node offers a free nvidia.com/gpu: the NVIDIA device plugin does not advertise the GPU nodes' GPUs (not running, "
        "or it cannot see the driver through the container runtime), or every GPU is already allocated",
        cause_id="k8s_no_gpu_capacity",
        check="nvidia.gpus",
        fix="Check the GPU node's Allocatable nvidia.com/gpu (kubectl describe node) and the device plugin's pod and log on it; "
        "install the NVIDIA device plugin or GPU Operator and make nvidia the node's container runtime",
        ask="`kubectl describe node <the GPU node>` (Capacity/Allocatable) and the nvidia-device-plugin pod's log",
    ),
    _S(
        id="nvidia.fabric_manager",
        pattern=r"system not yet initialized|cudaErrorSystemNotReady|CUDA error: 802",
        cause="CUDA error 802: the NVSwitch fabric is not initialised (nvidia-fabricmanager not running or not matching the driver)",
        cause_id="fabric_manager_not_ready",
        check="nvidia.fabric_manager",
        fix="sudo systemctl enable --now nvidia-fabricmanager (its version must match the driver), then retry",
    ),
    _S(
        id="nvidia.fabric_in_progress",
        pattern=r"Fabric[ \t\r]{0,80}\n[ \t]{0,80}State[ \t]{0,200}:[ \t]{0,40}In Progress",
        cause="nvidia-smi -q shows the NVSwitch fabric still training (Fabric State: In Progress): CUDA fails with error 802 until it completes",
        cause_id="fabric_manager_not_ready",
        check="nvidia.fabric_manager",
        fix="Check nvidia-fabricmanager (systemctl status nvidia-fabricmanager; its version must match the driver) and wait for "
        "Fabric State: Completed before starting CUDA work",
        ask="the output of `systemctl status nvidia-fabricmanager` and of `nvidia-smi -q | grep -A2 Fabric` on the affected node",
        ask_facts=("fabric_state",),
    ),
    _S(
        id="nvidia.forward_compat",
        pattern=r"forward compatibility was attempted on non supported HW|CUDA error: 804",
        cause="CUDA's forward-compatibility libraries are loaded on a GPU that does not support them",
        cause_id="forward_compat",
        check="nvidia.forward_compat",
        fix="Remove the CUDA compat directory (…/cuda/compat) from LD_LIBRARY_PATH",
    ),
    _S(
        id="nvidia.after_suspend",
        pattern=r"CUDA unknown error[\s\S]{0,300}?\bsuspend|\bsuspend\w{0,3}\b[\s\S]{0,300}?CUDA unknown error",
        cause="the NVIDIA driver lost its state over a suspend and resume: CUDA fails with 'unknown error' until nvidia_uvm is reloaded",
        cause_id="gpu_state_after_suspend",
        check="nvidia.driver",
        fix="Reload the unified-memory module (sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm) or reboot; to keep it working over "
        "suspend enable nvidia-suspend.service and NVreg_PreserveVideoMemoryAllocations=1",
    ),
    _S(
        id="nvidia.visible_devices",
        pattern=r"invalid device ordinal|changing env variable CUDA_VISIBLE_DEVICES after program start",
        cause="CUDA_VISIBLE_DEVICES names GPUs that do not exist here, or it changed after CUDA initialised",
        cause_id="cuda_visible_devices",
        check="nvidia.cuda_visible_devices",
        fix="Fix or unset CUDA_VISIBLE_DEVICES (it must list existing indices or UUIDs) and set it before the program starts",
    ),
    _S(
        id="vllm.nccl_truncated",
        pattern=r"bus error[^\n]{0,60}Loading nccl from library|Loading nccl from library (?P<lib>\S{1,300})(?:\n[^\n]{0,400}){0,6}\n[^\n]{0,200}\b[Bb]us error",
        cause="the NCCL library vLLM loads is damaged (a truncated download under ~/.config/vllm/nccl): mapping it crashes with a bus error",
        cause_id="corrupt_nccl_library",
        check="torch.nvidia_wheel_pins",
        fix="Delete the downloaded copy (rm ~/.config/vllm/nccl/cu12/libnccl.so.*) so it is fetched again, or point VLLM_NCCL_SO_PATH at "
        "the libnccl.so.2 of the nvidia-nccl-cu12 wheel; vLLM 0.4.1 and later check the file",
    ),
    _S(
        id="system.shm",
        pattern=r"out of shared memory|insufficient shared memory \(shm\)|Bus\s{1,10}error",
        cause="shared memory (/dev/shm) exhausted: Docker's default is 64 MiB",
        cause_id="shm_too_small",
        check="system.shm",
        fix="Give the container more /dev/shm: docker run --shm-size=16g (or --ipc=host); in Kubernetes mount an emptyDir with medium: Memory",
    ),
    _S(
        id="compile.python_too_new",
        pattern=r"(?:Python|python) (?P<py>3\.\d+)\+? (?:is )?not (?:yet )?supported (?:by|for) (?:torch\.compile|Dynamo)",
        cause="this torch's torch.compile (Dynamo) does not support Python {py}",
        cause_id="python_too_new_for_dynamo",
        check="compile.python_version",
        fix="Use a Python the torch release supports for torch.compile, or upgrade torch",
    ),
    _S(
        id="torch.no_cuda_gpus",
        pattern=r"No CUDA GPUs are available|(?:Error 100|CUDA error): no CUDA-capable device is detected|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice",
        cause="CUDA sees no GPU: most often CUDA_VISIBLE_DEVICES names a GPU index that does not exist here (or is empty)",
        cause_id="cuda_visible_devices",
        check="nvidia.cuda_visible_devices",
        fix="Check CUDA_VISIBLE_DEVICES (set in the shell, a launch script or os.environ in the code): it must list existing GPU indices, e.g. 0",
        ask="`echo $CUDA_VISIBLE_DEVICES`, `nvidia-smi -L` and where the script sets CUDA_VISIBLE_DEVICES",
        ask_facts=("gpus", "visible_gpus"),
    ),
    _S(
        id="nccl.ib_registration",
        pattern=r"ibv_reg_(?:dmabuf_)?mr(?:_iova2)? failed with error Cannot allocate memory",
        cause="NCCL cannot register its buffers with the InfiniBand NIC: the locked-memory limit is too low (a container's default "
        "memlock) or NCCL's buffers are set too large (NCCL_BUFFSIZE)",
        cause_id="nccl_ib_memory_registration",
        check="distributed.rendezvous",
        fix="Lift the locked-memory limit (ulimit -l unlimited; docker run --ulimit memlock=-1; Kubernetes: the pod's memlock) and "
        "unset a raised NCCL_BUFFSIZE",
        ask="`ulimit -l` inside the job and `env | grep NCCL`",
    ),
    _S(
        id="nccl.system_error",
        pattern=r"unhandled system error|ncclSystemError",
        cause="NCCL failed on a system call; in containers this is most often too little shared memory (/dev/shm)",
        cause_id="shm_too_small",
        check="system.shm",
        fix="Run with NCCL_DEBUG=INFO to see the failing call; in Docker give more /dev/shm (--shm-size=16g or --ipc=host)",
        ask="the output with NCCL_DEBUG=INFO and `df -h /dev/shm`",
        ask_facts=("shm",),
    ),
    # --- the common texts of every layer, read off public threads (issue 25's sweep) -------
    _S(
        id="container.cli_no_driver",
        pattern=r"nvidia-container-cli: initialization error: load library failed: libnvidia-ml\.so\.1",
        cause="the NVIDIA Container Toolkit finds no NVIDIA driver on the host (libnvidia-ml.so.1): the driver is not installed there, "
        "or the Docker daemon runs where it cannot see it (snap or rootless Docker, Docker Desktop without GPU support)",
        cause_id="cuda_not_available_driver",
        check="nvidia.driver",
        fix="Make nvidia-smi work on the host first (install the driver); use the distribution's Docker, not the snap, and "
        "re-run sudo nvidia-ctk runtime configure --runtime=docker",
        ask="the output of `nvidia-smi` on the host and `docker info | grep -i runtime`",
    ),
    _S(
        id="nvidia.error_803",
        pattern=r"Error 803: system has unsupported display driver / cuda driver combination|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        cause="the CUDA driver library loaded (libcuda) does not match the NVIDIA kernel module: a container's or a compat "
        "package's libcuda newer than the host driver, or a driver upgraded without a reboot",
        cause_id="driver_library_mismatch",
        check="nvidia.driver_library_mismatch",
        fix="Load the libcuda of the running driver: reinstall the NVIDIA driver so its libraries and kernel module are one release "
        "(reboot after an upgrade), remove the cuda-compat libraries from LD_LIBRARY_PATH on a GPU without forward compatibility, "
        "and in a container let the NVIDIA runtime mount the host's libcuda",
        ask="the output of `nvidia-smi` and `cat /proc/driver/nvidia/version`",
        ask_facts=("driver",),
    ),
    _S(
        id="torch.deferred_num_gpus",
        pattern=r"device >= 0 && device < num_gpus INTERNAL ASSERT FAILED",
        cause="CUDA_VISIBLE_DEVICES names fewer GPUs than the code asks for, or it was changed after CUDA was initialised",
        cause_id="cuda_visible_devices",
        check="nvidia.cuda_visible_devices",
        fix="Set CUDA_VISIBLE_DEVICES before the process starts (before import torch) and ask only for devices 0..N-1 of those it lists",
        ask="`echo $CUDA_VISIBLE_DEVICES` and `nvidia-smi -L`",
    ),
    _S(
        id="cuda.ptx_toolchain",
        pattern=r"the provided PTX was compiled with an unsupported toolchain|CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        cause="the NVIDIA driver is older than the CUDA that produced this PTX (torch, an extension or Triton built with a newer CUDA "
        "than the driver supports)",
        cause_id="driver_too_old_for_torch_cuda",
        check="torch.driver_supports_cuda",
        fix="Upgrade the NVIDIA driver to one that supports the CUDA the code was built with, or install builds made for the driver's CUDA",
        ask="the output of `nvidia-smi` and `pip list | grep -E 'torch|triton'`",
        ask_facts=("driver", "gpus", "dists"),
    ),
    _S(
        id="triton.kernel_image_invalid",
        pattern=r"Triton Error \[CUDA\]: device kernel image is invalid",
        cause="the driver cannot load the kernel Triton built: the driver is older than the CUDA of Triton's bundled ptxas "
        "(or, with an old Triton, a cached kernel built for another GPU was loaded)",
        cause_id="driver_too_old_for_torch_cuda",
        check="torch.driver_supports_cuda",
        fix="Upgrade the NVIDIA driver to the branch of the CUDA this torch/Triton ships (or point TRITON_PTXAS_PATH at a ptxas "
        "no newer than the driver's CUDA); clear ~/.triton/cache when the cache directory is shared between GPU models",
        ask="the output of `nvidia-smi` and `pip list | grep -E 'torch|triton'`",
        ask_facts=("driver", "gpus", "dists"),
    ),
    _S(
        id="nvidia.gpu_busy",
        pattern=r"CUDA-capable device\(s\) is/are busy or unavailable|all CUDA-capable devices are busy or unavailable"
        r"|CUDA_ERROR_DEVICE_UNAVAILABLE|cudaErrorDevicesUnavailable",
        cause="the GPU is in an exclusive compute mode and another process holds it, or the process cannot reach it",
        cause_id="gpu_exclusive_busy",
        check="nvidia.compute_mode",
        fix="Free the GPU (nvidia-smi lists its processes) or set the default compute mode: sudo nvidia-smi -c DEFAULT",
        ask="the output of `nvidia-smi -q -d COMPUTE` and `nvidia-smi`",
    ),
    _S(
        id="toolchain.ninja_required",
        pattern=r"Ninja is required to load C\+\+ extensions|(?:sh|bash): (?:\d{1,4}: )?ninja: (?:command )?not found",
        cause="torch.utils.cpp_extension builds with ninja and none is installed",
        cause_id="ninja_missing",
        check="toolchain.ninja",
        fix="pip install ninja (in the environment that builds the extension)",
    ),
    _S(
        id="toolchain.gcc_missing",
        pattern=r"error: command '(?P<cc>(?:[\w.-]{0,40}-)?(?:gcc|cc|g\+\+|c\+\+|clang)(?:-\d{1,2})?)' failed(?: with exit code 1)?: No such file or directory"
        r"|Command '\['which', '(?P<cxx>c\+\+|g\+\+)'\]' returned non-zero exit status 1",
        cause="no C/C++ compiler is installed: building the extension needs gcc and g++",
        cause_id="no_c_compiler",
        check="compile.cxx_compiler",
        fix="Install the compilers: apt-get install build-essential (dnf install gcc gcc-c++), or point CC/CXX at them",
    ),
    _S(
        id="compile.msvc_missing",
        pattern=r"Compiler: cl is not found|'cl' is not recognized as an internal or external command|Microsoft Visual C\+\+ 14\.0 or greater is required",
        cause="the MSVC compiler (cl.exe) is not reachable: on Windows Inductor and extension builds compile with Visual Studio's C++ tools",
        cause_id="no_c_compiler",
        check="compile.cxx_compiler",
        fix="Install Visual Studio Build Tools with the 'Desktop development with C++' workload and run from the x64 Native Tools prompt "
        "(or call vcvars64.bat first)",
    ),
    _S(
        id="build.gxx_missing",
        pattern=r"error trying to exec 'cc1plus': execvp: No such file or directory",
        cause="gcc is installed without its C++ compiler (cc1plus, from g++): C++ sources cannot be compiled",
        cause_id="no_c_compiler",
        check="compile.cxx_compiler",
        fix="Install the C++ compiler of the same gcc: apt-get install g++ (dnf install gcc-c++; conda install gxx_linux-64)",
        ask="`gcc --version` and `g++ --version`",
    ),
    _S(
        id="build.gxx_too_new_for_cuda",
        pattern=r"The current installed version of g\+\+ \((?P<gxx>[\d.]{1,20})\) is greater than the maximum required version by "
        r"CUDA (?P<cuda>[\d.]{1,10})",
        cause="g++ {gxx} is newer than CUDA {cuda}'s nvcc accepts",
        cause_id="host_compiler_too_new_for_nvcc",
        check="toolchain.nvcc",
        fix="Install an older g++ that CUDA {cuda} supports and build with it (export CC=gcc-<N> CXX=g++-<N>), or a newer CUDA toolkit",
        ask="`nvcc --version` and `g++ --version`",
    ),
    _S(
        id="build.gcc_too_new_for_nvcc",
        pattern=r"#error -- unsupported (?:GNU|clang) version! (?:gcc|clang) versions later than (?P<max>\d{1,2}) are not supported",
        cause="the host compiler is newer than this CUDA toolkit's nvcc accepts (gcc > {max})",
        cause_id="host_compiler_too_new_for_nvcc",
        check="toolchain.nvcc",
        fix="Install gcc-{max} and g++-{max} and build with them (export CC=gcc-{max} CXX=g++-{max} NVCC_CCBIN=g++-{max}), or a newer CUDA "
        "toolkit that supports this gcc",
        ask="`nvcc --version` and `gcc --version`",
    ),
    _S(
        id="torch.no_wheel",
        pattern=r"(?:Could not find a version that satisfies the requirement|No matching distribution found for) (?P<req>torch(?:vision|audio)?\b[^\s)]{0,40})"
        r"|(?P<wheel>[\w.+-]{1,200}\.whl) is not a supported wheel on this platform",
        cause="pip finds no {req} wheel for this Python, OS and CPU: a Python newer (or older) than that release supports, a 32-bit Python, "
        "or an index that lacks the build",
        cause_id="no_wheel_for_platform",
        check="system.python",
        fix="Use a 64-bit Python the release supports (pytorch.org lists each release's Pythons), or a torch release built for this "
        "Python; for a CUDA build give its index: --index-url https://download.pytorch.org/whl/cu<XY>",
        ask="`python --version`, `python -c 'import platform; print(platform.machine(), platform.architecture())'` and the pip command",
    ),
    _S(
        id="compile.windows",
        pattern=r"Windows not yet supported for torch\.compile",
        cause="this torch's torch.compile does not support Windows",
        cause_id="compile_unsupported_platform",
        check="system.os",
        fix="Upgrade torch (torch.compile runs on Windows from torch 2.6: MSVC for the CPU, the triton-windows package for GPUs), "
        "or run under WSL 2, or skip torch.compile",
    ),
    _S(
        id="torch.mkl_ijit",
        pattern=r"undefined symbol: iJIT_NotifyEvent|Intel MKL FATAL ERROR: Cannot load (?P<lib>libmkl_\w+\.so(?:\.\d)?)",
        cause="the MKL in the environment does not match this torch (conda's mkl 2024.1 and later dropped a symbol torch links, or "
        "MKL's libraries are mixed)",
        cause_id="mkl_incompatible",
        check="torch.importable",
        fix="Pin MKL to the release torch was built with: conda install mkl=2024.0 (or install torch from pip, which brings its own)",
        ask="`conda list | grep -E 'mkl|pytorch|intel'`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.duplicate_openmp",
        pattern=r"OMP: Error #15: Initializing (?P<lib>[\w.-]{1,60}), but found (?P<other>[\w.-]{1,60}) already initialized",
        cause="two OpenMP runtimes ({lib} and {other}) are loaded into one process (one from torch, one from numpy/MKL, conda's "
        "intel-openmp or another package)",
        cause_id="duplicate_openmp",
        check="torch.loaded_libraries",
        fix="Keep one OpenMP runtime: install torch and numpy from the same source (all pip, or all one conda channel), or remove "
        "the extra intel-openmp/llvm-openmp; KMP_DUPLICATE_LIB_OK=TRUE only hides it and can give wrong results",
        ask="`conda list | grep -E 'openmp|mkl|numpy|pytorch'`",
        ask_facts=("dists",),
    ),
    _S(
        id="system.execstack",
        pattern=r"(?P<lib>[\w.+-]{1,80}\.so(?:\.\d+)*): cannot enable executable stack as shared object requires",
        cause="the system refuses {lib}'s request for an executable stack (glibc 2.41 and later, or SELinux): older torch and conda "
        "builds carry that flag",
        cause_id="execstack_refused",
        check="torch.importable",
        fix="Clear the flag on that library (patchelf --clear-execstack <path to {lib}>) or install a newer torch build without it",
        ask="`ldd --version` and how torch was installed (pip or conda)",
    ),
    _S(
        id="torch.setuptools_packaging",
        pattern=r"cannot import name 'packaging' from 'pkg_resources'",
        cause="setuptools 70 and later no longer provide pkg_resources.packaging, which this torch's cpp_extension imports",
        cause_id="setuptools_incompatible",
        check="packages.versions",
        fix="pip install 'setuptools<70', or upgrade torch (2.4 and later no longer import it)",
        ask="`pip list | grep -E 'torch|setuptools'`",
        ask_facts=("dists",),
    ),
    _S(
        id="packages.protobuf_generated_code",
        pattern=r"Descriptors cannot(?: not)? be created directly",
        cause="protobuf 4 (3.20's successor) refuses the _pb2.py code an installed package generated with an older protoc",
        cause_id="protobuf_incompatible",
        check="packages.versions",
        fix="pip install 'protobuf<=3.20.3' (or upgrade the package that ships the old _pb2.py files); "
        "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python works around it, slowly",
        ask="`pip list | grep -i protobuf` and the package whose _pb2.py the traceback names",
        ask_facts=("dists",),
    ),
    _S(
        id="packages.numpy_alias_removed",
        pattern=r"module 'numpy' has no attribute '(?P<alias>float|int|bool|object|str|complex|long|unicode)'\.?\s{0,4}"
        r"`np\.(?P=alias)` was a deprecated alias",
        cause="code (the project or an installed package) uses np.{alias}, an alias NumPy 1.24 removed: it is older than the "
        "NumPy installed",
        cause_id="dependency_too_new",
        check="packages.versions",
        fix="Upgrade the package whose line the traceback names to a release for this NumPy, or pip install 'numpy<1.24'",
        ask="`pip list | grep -i numpy` and the traceback's last frames (which package calls it)",
        ask_facts=("dists",),
    ),
    _S(
        id="packages.torch_six_removed",
        pattern=r"No module named 'torch\._six'",
        cause="code (the project or an installed package) imports torch._six, which torch 2.0 removed: it is older than the torch "
        "installed",
        cause_id="dependency_too_new",
        check="packages.versions",
        fix="Upgrade the package whose line the traceback names to a release for torch 2 (its import becomes `from torch import inf`, "
        "`str` for string_classes), or use a torch before 2.0",
        ask="`pip list | grep -i torch` and the traceback's last frames (which package imports it)",
        ask_facts=("dists",),
    ),
    _S(
        id="compile.triton_not_installed",
        pattern=r"No module named '(?:triton|pytorch_triton)'",
        cause="Triton is not installed: torch.compile's GPU code and Triton kernels need it",
        cause_id="triton_missing",
        check="compile.triton_available",
        fix="Install the Triton this torch pins: pip install triton (Windows: pip install triton-windows); on a CPU-only machine "
        "torch.compile needs no Triton",
        ask="`pip list | grep -E 'torch|triton'`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.windows_dll_c",
        pattern=r"DLL load failed while importing _C: The specified module could not be found",
        cause="a DLL torch._C needs on Windows is missing (most often the Microsoft Visual C++ Redistributable, or a CUDA DLL of a "
        "broken install)",
        cause_id="windows_dll_dependency_missing",
        check="torch.importable",
        fix="Install the latest Microsoft Visual C++ Redistributable (x64) and reinstall torch: pip install --force-reinstall torch",
    ),
    _S(
        id="torch.torchvision_cpu_op",
        pattern=r"Could not run 'torchvision::\w+' with arguments from the 'CUDA' backend",
        cause="torchvision is a CPU-only build (or built for another torch) beside a CUDA torch: its CUDA operators are missing",
        cause_id="torchvision_torch_mismatch",
        check="torch.extension_abi",
        fix="Install torchvision from the same CUDA index as torch: pip install --force-reinstall torchvision 'torch==<your torch>' "
        "--index-url https://download.pytorch.org/whl/cu<XY>",
        ask="`pip list | grep -E 'torch|torchvision'`",
        ask_facts=("dists",),
    ),
    _S(
        id="nvidia.smi_no_driver",
        pattern=r"NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver|nvidia-smi: (?:command )?not found"
        r"|'nvidia-smi' is not recognized as an internal or external command",
        cause="no NVIDIA driver is running: the kernel module is not loaded (a kernel upgraded without the module rebuilt, Secure Boot "
        "refusing it) or the driver is not installed (in a container: started without the NVIDIA runtime)",
        cause_id="cuda_not_available_driver",
        check="nvidia.driver",
        fix="sudo modprobe nvidia says why it is not loaded; reinstall the driver for the running kernel (DKMS), enroll its key or "
        "disable Secure Boot; in Docker start the container with --gpus all",
        ask="`uname -r`, `lsmod | grep nvidia` and `dkms status`",
    ),
    _S(
        id="nvidia.secure_boot",
        pattern=r"could not insert 'nvidia(?:_\w{1,10})?': (?:Key was rejected by service|Required key not available)",
        cause="Secure Boot refuses the unsigned NVIDIA kernel module, so no driver is running",
        cause_id="cuda_not_available_driver",
        check="nvidia.driver",
        fix="Enroll the module's signing key (sudo mokutil --import the DKMS key, reboot, confirm in the MOK manager) or disable Secure Boot",
    ),
    _S(
        id="container.cuda_requirement",
        pattern=r"nvidia-container-cli: requirement error: unsatisfied condition: cuda\s{0,2}>=\s{0,2}(?P<cuda>\d{1,2}\.\d{1,2})",
        cause="the image needs CUDA {cuda} and the host's NVIDIA driver supports an older CUDA",
        cause_id="driver_too_old_for_torch_cuda",
        check="torch.driver_supports_cuda",
        fix="Upgrade the host driver to one for CUDA {cuda}, or use an image built for the CUDA the driver supports (nvidia-smi's "
        "'CUDA Version'); NVIDIA_DISABLE_REQUIRE=1 only helps on GPUs with forward compatibility",
        ask="`nvidia-smi` on the host and the image's name",
        ask_facts=("driver", "gpus"),
    ),
    _S(
        id="bnb.without_cuda",
        pattern=r"The installed version of bitsandbytes was compiled without GPU support|CUDA Setup failed despite GPU being available"
        r"|libbitsandbytes_cpu\.(?:so|dll)[^\n]{0,20}undefined symbol|function 'cadam32bit_grad_fp32' not found"
        r"|Required library version not found: libbitsandbytes_cuda\d{2,3}",
        cause="bitsandbytes cannot use the GPU: it loaded its CPU library (an old bitsandbytes without a build for this CUDA, a CUDA "
        "runtime it cannot find, or no GPU visible to torch)",
        cause_id="bitsandbytes_without_cuda",
        check="packages.versions",
        fix="pip install -U bitsandbytes (0.43 and later ship builds for every CUDA torch uses); check torch.cuda.is_available() and "
        "unset BNB_CUDA_VERSION; python -m bitsandbytes says which library it loads",
        ask="the output of `python -m bitsandbytes` and `pip list | grep -E 'torch|bitsandbytes'`",
        ask_facts=("dists",),
    ),
    _S(
        id="dist.port_in_use",
        pattern=r"The server socket has failed to listen on any local network address|failed to bind to [^\n]{0,80}errno: 98|"
        r"\bEADDRINUSE\b",
        cause="the rendezvous port (MASTER_PORT, 29500 by default) is taken: another job or a stale process of an earlier run listens on it",
        cause_id="rendezvous_port_in_use",
        check="distributed.rendezvous",
        fix="Give the job a free port (torchrun --master-port <port>, or MASTER_PORT) or stop the stale process (ss -ltnp | grep <port>)",
    ),
    _S(
        id="nccl.duplicate_gpu",
        pattern=r"Duplicate GPU detected : rank \d{1,6} and rank \d{1,6} both on CUDA device",
        cause="two ranks use the same GPU: each process must select its own device (LOCAL_RANK) before NCCL starts",
        cause_id="ranks_share_a_gpu",
        check="distributed.launch",
        fix="Call torch.cuda.set_device(int(os.environ['LOCAL_RANK'])) before init_process_group and do not hard-code a device; give "
        "the job as many visible GPUs as ranks per node (CUDA_VISIBLE_DEVICES, --nproc-per-node)",
    ),
    _S(
        id="dist.no_nccl",
        pattern=r"Distributed package doesn't have NCCL built in",
        cause="this torch has no NCCL: NCCL exists only in torch's CUDA builds on Linux (Windows and macOS builds, CPU builds lack it)",
        cause_id="nccl_not_in_build",
        check="distributed.launch",
        fix="Use backend='gloo' on Windows and macOS (or for CPU tensors); on Linux with GPUs install a CUDA build of torch",
    ),
    _S(
        id="dist.not_launched",
        pattern=r"environment variable (?P<var>RANK|WORLD_SIZE|MASTER_ADDR|MASTER_PORT|LOCAL_RANK) expected, but not set",
        cause="the script calls init_process_group('env://') but was not started by a launcher: {var} is not set",
        cause_id="not_launched_by_torchrun",
        check="distributed.launch",
        fix="Start it with torchrun --nproc-per-node=<GPUs> script.py (it sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT), or set them",
    ),
    _S(
        id="triton.shared_memory",
        pattern=r"out of resource: shared memory, Required: (?P<need>\d{1,9}), Hardware limit(?:ation)?: (?P<have>\d{1,9})",
        cause="the kernel's configuration needs {need} bytes of shared memory per block and this GPU has {have}: it was tuned for a "
        "larger GPU (A100/H100 class)",
        cause_id="gpu_shared_memory_too_small",
        check="triton.gpu_supported",
        fix="Use the project's configuration for this GPU class (smaller block sizes or num_stages), or run on a GPU with more shared "
        "memory per block",
        ask="the output of `nvidia-smi -L`",
        ask_facts=("gpus",),
    ),
    _S(
        id="xla.tpu_in_use",
        pattern=r"libtpu\.so already in use by (?:process with pid \d{1,9}|another process)|TPU initialization failed: open\(/dev/accel\d{1,3}\): Device or resource busy",
        cause="another process holds the TPU (an earlier run still alive, a notebook kernel, JAX or TensorFlow), or its lock file was left behind",
        cause_id="tpu_in_use",
        check="xla.libtpu",
        fix="Stop the process that holds /dev/accel* (sudo lsof -w /dev/accel*) and remove a stale /tmp/libtpu_lockfile",
    ),
    _S(
        id="numpy.too_old",
        pattern=r"module compiled against (?:ABI|API) version 0x\w{1,8} but this version of numpy is 0x\w{1,8}",
        cause="a module was compiled against a newer NumPy than the one installed",
        cause_id="numpy_abi",
        check="torch.numpy_abi",
        fix="Upgrade NumPy to the release the module was built with (pip install -U numpy), or install the module's build for this NumPy",
        ask="`pip list | grep -E 'numpy|torch'`",
        ask_facts=("dists",),
    ),
    _S(
        id="build.cuda_call_configuration",
        pattern=r"undefined symbol: __cuda(?:Push|Pop)CallConfiguration",
        cause="the extension was compiled by an nvcc of CUDA 10 or later and runs against an older CUDA runtime: two CUDA toolkits, "
        "nvcc from one and libcudart (or torch's CUDA) from the other",
        cause_id="toolkit_torch_cuda_mismatch",
        check="toolchain.nvcc",
        fix="Build with the nvcc of the CUDA torch was built with (CUDA_HOME=/usr/local/cuda-<torch's CUDA>, PATH with its bin first), "
        "then rebuild the extension from a clean tree (rm -rf build)",
        ask="`nvcc --version`, `which nvcc` and `python -c 'import torch; print(torch.version.cuda)'`",
    ),
    _S(
        id="build.compiler_abi",
        pattern=r"Your compiler \((?P<cc>[^)\n]{1,60})\) may be ABI-incompatible with PyTorch",
        cause="the C++ compiler ({cc}) is older than torch's C++ extensions need: code it builds may crash or fail to load",
        cause_id="compiler_too_old",
        check="compile.cxx_compiler",
        fix="Build with a newer g++ (GCC 9 or later for torch 2; CC=gcc-11 CXX=g++-11, or devtoolset on RHEL 7)",
        ask="`gcc --version` and `g++ --version`",
    ),
    _S(
        id="torchvision.custom_ops",
        pattern=r"Couldn't load custom C\+\+ ops\. This can happen if your PyTorch and torchvision versions are incompatible",
        cause="torchvision's compiled operators do not load with this torch: the two releases do not pair (a nightly torch with a "
        "stable torchvision, or one of them upgraded alone)",
        cause_id="torchvision_torch_mismatch",
        check="torch.companions",
        fix="Install the torchvision release built for this torch, from the same index: pip install --force-reinstall torchvision "
        "'torch==<your torch>' (for a nightly torch, torchvision's nightly from the same nightly index)",
        ask="`pip list | grep -E 'torch|torchvision'`",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.missing_attribute",
        pattern=r"AttributeError: module 'torch(?P<sub>(?:\.\w{1,40}){0,3})' has no attribute '(?P<attr>\w{1,80})'",
        cause="this torch has no torch{sub}.{attr}: the code or a package was written for another torch release (most often a newer "
        "one; a private name such as torch._six was removed in a later one), or a torch.py in the working directory shadows the package",
        cause_id="torch_too_old_for_project",
        check="packages.versions",
        fix="Install the torch release the package requires (its requirements name it) and check python -c 'import torch; "
        "print(torch.__version__, torch.__file__)' points at site-packages",
        ask="`pip list | grep torch` and the package's required torch version",
        ask_facts=("dists",),
    ),
    _S(
        id="extension.cuda_versions",
        pattern=r"Detected that PyTorch and (?P<pkg>[\w-]{1,60}) were compiled with different CUDA (?:major )?versions",
        cause="{pkg} was built for another CUDA than the installed torch",
        cause_id="extension_abi_mismatch",
        check="torch.extension_abi",
        fix="Install the {pkg} build made for this torch and its CUDA (PyG's wheels: pip install {pkg} -f "
        "https://data.pyg.org/whl/torch-<X.Y.0>+cu<XY>.html), or rebuild it against this torch",
        ask="`pip list | grep -E 'torch'`",
        ask_facts=("dists",),
    ),
    _S(
        id="extension.torch_1x_libs",
        pattern=r"(?P<lib>libtorch_cuda_(?:cu|cpp)\.so): cannot open shared object file",
        cause="an extension was built for a torch 1.x that split libtorch_cuda ({lib}); the installed torch has no such library",
        cause_id="extension_abi_mismatch",
        check="torch.extension_abi",
        fix="Rebuild the extension against the installed torch, or install its build for this torch release",
        ask="`pip list | grep torch` and the extension's version",
        ask_facts=("dists",),
    ),
    _S(
        id="torch.shadowed_by_local_file",
        pattern=r"partially initialized module '(?P<mod>torch|torchvision|torchaudio|triton|numpy)' has no attribute",
        cause="a file or directory named {mod} (a {mod}.py in the working directory or on PYTHONPATH) is imported instead of the package",
        cause_id="local_file_shadows_package",
        check="torch.importable",
        fix="Rename the local {mod}.py (and delete its __pycache__), or run from another directory; python -c 'import {mod}; "
        "print({mod}.__file__)' shows which one is imported",
    ),
    _S(
        id="nvidia.nvml_permissions",
        pattern=r"Failed to initialize NVML: Insufficient Permissions",
        cause="this user cannot open the GPU device nodes (/dev/nvidia*): their group or mode keeps it out",
        cause_id="gpu_device_permission",
        check="nvidia.device_nodes",
        fix="Give the user access to /dev/nvidia* (ls -l /dev/nvidia*: add it to their group; NVreg_DeviceFileMode / "
        "NVreg_DeviceFileGID on hardened hosts); in a container start it with the NVIDIA runtime",
        ask="`ls -l /dev/nvidia*` and `id`",
    ),
    _S(
        id="container.driver_files_in_image",
        pattern=r"nvidia-container-cli: mount error: file creation failed: [^\n]{0,300}: file exists",
        cause="the image already holds NVIDIA driver files the runtime mounts from the host (an image made by docker commit of a "
        "running GPU container, or a driver package installed in it)",
        cause_id="image_ships_driver_files",
        check="system.container",
        fix="Rebuild the image without the driver's files (no nvidia-utils or libnvidia-* packages, no docker commit of a GPU "
        "container); the host's driver is mounted at start",
    ),
    _S(
        id="dist.store_timeout",
        pattern=r"Timed out after \d{1,6} seconds waiting for clients\. (?P<joined>\d{1,6})/(?P<world>\d{1,6}) clients joined",
        cause="only {joined} of {world} ranks reached the rendezvous: the others did not start, or cannot reach MASTER_ADDR:MASTER_PORT "
        "(a firewall, a wrong address or network interface)",
        cause_id="rendezvous_unreachable",
        check="distributed.rendezvous",
        fix="Start every rank with the same MASTER_ADDR (an address the other nodes reach) and MASTER_PORT, open that port between "
        "the nodes, and check each node's log for the rank that never started",
    ),
    _S(
        id="nccl.no_interface",
        pattern=r"NET/Socket : no usable interface found|Bootstrap : no socket interface found",
        cause="NCCL finds no network interface to use: NCCL_SOCKET_IFNAME names one this host lacks (or excludes every one it has)",
        cause_id="nccl_socket_interface",
        check="distributed.rendezvous",
        fix="Set NCCL_SOCKET_IFNAME to an interface the host has (ip -br link: eth0, ens5, ib0 ...) or unset it",
        ask="`env | grep NCCL` and `ip -br addr`",
    ),
    # --- generic, last ---------------------------------------------------------------------
    _S(
        id="system.no_space",
        pattern=r"No space left on device",
        cause="the disk holding the temporary or cache directory is full",
        cause_id="disk_full",
        check="system.disk",
        fix="Free space in the temporary directory or point TMPDIR at a larger disk",
    ),
    _S(
        id="system.read_only",
        pattern=r"[Cc]annot create temporary file[^\n]*|Read-only file system[^\n]*",
        cause="a temporary or cache directory is not writable ({0})",
        cause_id="cache_not_writable",
        check="compile.inductor_cache",
        fix="Point TMPDIR (and the cache directories) at a writable file system: export TMPDIR=/writable/tmp",
    ),
    _S(
        id="system.permission",
        pattern=r"Permission denied: '?(?P<path>[^'\n]+)'?",
        cause="a directory torch or Triton writes to is not writable ({path})",
        cause_id="cache_not_writable",
        check="compile.inductor_cache",
        fix="Make the temporary and cache directories writable, e.g. export TMPDIR=/writable/tmp TRITON_CACHE_DIR=/writable/triton",
    ),
    _S(
        id="torch.cuda_error",
        pattern=r"(?P<err>CUDA error: [^\n]+|cudaError\w+|CUDA_ERROR_\w+)",
        cause="{err}",
        cause_id="cuda_error",
        check="smoke.matmul",
        fix="Check the GPU and driver: nvidia-smi; look for Xid errors in dmesg; see the nvidia.* and torch.* checks",
        ask="`nvidia-smi`, `dmesg | grep -i xid` and the full error",
        ask_facts=("driver", "gpus"),
    ),
    # --- within one check's own error (scope "check:<id>"; a bare "numpy" or "802" in a paste is
    # no cause): the check looks its hint up with ``hints_for``; triage and the smokes search only
    # the "paste" rows. ``fix`` may name ``{v}``, the torch version, which the check fills in.
    # torch.importable: the error `import torch` raised
    Signature(
        id="hint.torch_cuda_libs_missing",
        pattern=r"lib(cudnn|cublas\w*|nccl|cusparse\w*|cufft|curand|cusolver|nvJitLink|cudart|nvrtc)[\w.]*: cannot open shared object",
        cause="torch's CUDA libraries (the nvidia-* pip packages) are missing",
        cause_id="nvidia_pip_libs_missing",
        check="torch.importable",
        scope="check:torch.importable",
        fix="torch's CUDA libraries (the nvidia-* pip packages) are missing: pip install --force-reinstall torch=={v} "
        "(without --no-deps); on RHEL-like systems check that purelib and platlib are the same directory",
    ),
    Signature(
        id="hint.torch_undefined_symbol",
        pattern=r"undefined symbol",
        cause="a library on LD_LIBRARY_PATH or an extension built for another torch shadows torch's own",
        cause_id="library_shadowing",
        check="torch.importable",
        scope="check:torch.importable",
        fix="a library on LD_LIBRARY_PATH or an extension built for another torch is shadowing torch's own: unset LD_LIBRARY_PATH and retry, "
        "or reinstall the package named in the error",
    ),
    Signature(
        id="hint.torch_system_library",
        pattern=r"libgomp|libstdc\+\+|GLIBC",
        cause="a system library is missing or too old",
        cause_id="system_library_too_old",
        check="torch.importable",
        scope="check:torch.importable",
        fix="a system library is missing or too old: apt-get install libgomp1 (or use a glibc >= 2.28 base image)",
    ),
    Signature(
        id="hint.torch_numpy",
        pattern=r"numpy",
        cause="NumPy is incompatible with this torch",
        cause_id="numpy_incompatible",
        check="torch.importable",
        scope="check:torch.importable",
        fix="NumPy is incompatible with this torch: pip install 'numpy<2' or upgrade torch",
        ignore_case=True,
    ),
    # torch.cuda_available: the first line of CUDA's own warning
    Signature(
        id="hint.cuda_fabric_not_ready",
        pattern=r"802|system not yet initialized",
        cause="the NVSwitch fabric is not initialised",
        cause_id="fabric_manager_not_running",
        check="torch.cuda_available",
        scope="check:torch.cuda_available",
        fix="start nvidia-fabricmanager (sudo systemctl enable --now nvidia-fabricmanager) and wait for the fabric",
    ),
    Signature(
        id="hint.cuda_forward_compat",
        pattern=r"804|forward compatibility",
        cause="the CUDA forward-compatibility libraries are loaded on a GPU that does not support them",
        cause_id="cuda_compat_unsupported",
        check="torch.cuda_available",
        scope="check:torch.cuda_available",
        fix="remove the CUDA compat directory from LD_LIBRARY_PATH (forward compatibility needs a data-center GPU)",
    ),
    Signature(
        id="hint.cuda_driver_mismatch",
        pattern=r"803|unsupported display driver",
        cause="the user-space driver does not match the kernel module",
        cause_id="driver_library_mismatch",
        check="torch.cuda_available",
        scope="check:torch.cuda_available",
        fix="the user-space driver does not match the kernel module: reboot, or remove stray libcuda copies from LD_LIBRARY_PATH",
    ),
    Signature(
        id="hint.cuda_driver_too_old",
        pattern=r"too old|insufficient",
        cause="the NVIDIA driver is too old for this torch's CUDA",
        cause_id="driver_too_old_for_torch_cuda",
        check="torch.cuda_available",
        scope="check:torch.cuda_available",
        fix="upgrade the NVIDIA driver, or install a torch built for an older CUDA",
    ),
    Signature(
        id="hint.cuda_visible_devices",
        pattern=r"CUDA_VISIBLE_DEVICES|invalid device ordinal",
        cause="CUDA_VISIBLE_DEVICES selects no usable GPU",
        cause_id="cuda_visible_devices",
        check="torch.cuda_available",
        scope="check:torch.cuda_available",
        fix="fix or unset CUDA_VISIBLE_DEVICES",
    ),
    Signature(
        id="hint.cuda_gpu_busy",
        pattern=r"busy or unavailable",
        cause="the GPU is in an exclusive compute mode and in use",
        cause_id="gpu_exclusive_busy",
        check="torch.cuda_available",
        scope="check:torch.cuda_available",
        fix="the GPU is in an exclusive compute mode and in use: free it or sudo nvidia-smi -c DEFAULT",
    ),
)


def hints_for(check: str) -> list[Signature]:
    """The rows searched only within ``check``'s own error (scope ``check:<id>``), in catalog
    order (:func:`envdoctor.best_signature` takes the first found)."""
    return [s for s in SIGNATURES if s.scope == f"check:{check}"]
