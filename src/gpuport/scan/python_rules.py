"""GP2xx: the Python rules, each declared once with its documentation, and the AST checker.

The checker resolves names through imports and aliases (``import torch as T``,
``from torch.backends import cudnn``, ``from os import environ``) and follows simple
assignments (``major, minor = torch.cuda.get_device_capability()``), in one walk of the tree.
It never imports or runs the code it reads.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gpuport import kb
from gpuport.findings import Category, Confidence, Severity
from gpuport.rules import Rule, rule

_PYTORCH_HIP_NOTES = "https://pytorch.org/docs/stable/notes/hip.html"
_PYTORCH_ROCM_COMPAT = (
    "https://rocm.docs.amd.com/en/latest/compatibility/ml-compatibility/pytorch-compatibility.html"
)

CUDA_ONLY_IMPORT = rule(
    id="GP201",
    slug="cuda-only-import",
    category=Category.PYTHON,
    severity=Severity.HIGH,  # per finding: from the package's status in the knowledge base
    confidence=Confidence.HIGH,
    summary="Imports a package that has no ROCm build, or needs a special one",
    what=(
        "Looks up every `import` and `from … import` (and `importlib.import_module` / "
        "`__import__` with a literal name) in gpuport's knowledge base of Python packages. "
        "It reports packages whose ROCm status is not-supported (HIGH), partial or CUDA-only "
        "artifacts (MEDIUM), and packages that need a ROCm build from another index or from "
        "source (LOW). Frameworks such as torch, whose only change is the install index, are "
        "left to the dependency rules (GP1xx). An import guarded by `try/except ImportError` "
        "is at most LOW, because the code already copes with its absence; imports under "
        "`if TYPE_CHECKING:` are ignored."
    ),
    why=(
        "Packages such as TensorRT, PyCUDA, pynvml or numba.cuda talk to the CUDA driver or "
        "NVML directly and have no ROCm build: the import fails, or the package loads and "
        "finds no NVIDIA GPU. Others (flash-attn, bitsandbytes, apex, xformers) have ROCm "
        "builds that must be installed from a different place or compiled."
    ),
    example="import pynvml\nimport tensorrt as trt\nfrom flash_attn import flash_attn_func\n",
    instead=(
        "import amdsmi                  # AMD's counterpart of NVML\n"
        "# TensorRT -> MIGraphX or ONNX Runtime's MIGraphX provider\n"
        "from torch.nn.functional import scaled_dot_product_attention\n"
    ),
    fix=(
        "Replace the package with the ROCm counterpart named in the finding, or install its "
        "ROCm build as the finding says."
    ),
    mechanical=False,
    references=(_PYTORCH_ROCM_COMPAT,),
)

CUDA_VERSION_CHECK = rule(
    id="GP202",
    slug="cuda-version-check",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Branches on, or parses, torch.version.cuda, which is None on ROCm",
    what=(
        "Finds `torch.version.cuda` (and names assigned from it) used as a condition "
        "(`if torch.version.cuda:`, `torch.version.cuda is not None`), compared, or parsed "
        "(`.split('.')`, `float(...)`, `version.parse(...)`). Code that also tests "
        "`torch.version.hip` (or an `is_rocm`/`is_hip` flag) in the same condition, the same "
        "if/elif chain, an enclosing if, or an earlier guard is left alone."
    ),
    why=(
        "A ROCm build of PyTorch sets `torch.version.hip` and leaves `torch.version.cuda` as "
        "None, while `torch.cuda.is_available()` still returns True. A CUDA check therefore "
        "sends a ROCm machine down the CPU or 'no GPU' path, and parsing the version raises "
        "AttributeError or TypeError."
    ),
    example=(
        "if torch.version.cuda is not None:\n    use_fused_kernels()\n"
        "major = int(torch.version.cuda.split('.')[0])\n"
    ),
    instead=("if torch.version.hip:\n    ...  # ROCm\nelif torch.version.cuda:\n    ...  # CUDA\n"),
    fix=(
        "Test `torch.version.hip` for ROCm and `torch.version.cuda` for CUDA, and give ROCm "
        "its own branch; only parse a version string after checking it is not None."
    ),
    mechanical=False,
    references=(f"{_PYTORCH_HIP_NOTES}#checking-for-hip",),
)

DEVICE_CAPABILITY_GATE = rule(
    id="GP203",
    slug="device-capability-gate",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Gates a feature on NVIDIA compute-capability numbers or sm_XX names",
    what=(
        "Finds `torch.cuda.get_device_capability()` results (also `get_device_properties(…)"
        ".major/.minor`, through the names they are assigned to) compared with numbers such "
        "as `>= (8, 0)`, `major >= 8` or `== (9, 0)`; `sm_XX` / `compute_XX` strings compared "
        "with something; and f-strings that build `sm_{major}{minor}` from the capability."
    ),
    why=(
        "On ROCm the capability is the gfx version: (9, 0) for gfx90a (MI200), (9, 4) for "
        "gfx942 (MI300), (9, 5) for gfx950, (11, 0) for RDNA3. So `>= (8, 0)` passes on every "
        "recent AMD GPU, and `== (9, 0)` — Hopper on NVIDIA — matches MI200, which lacks "
        "Hopper's features (FP8, TMA, FA3). The gate enables kernels that do not exist or "
        "disables ones that do."
    ),
    example="if torch.cuda.get_device_capability() >= (8, 0):\n    use_bf16_kernels()\n",
    instead=(
        "if torch.version.hip:\n"
        "    arch = torch.cuda.get_device_properties(0).gcnArchName  # e.g. 'gfx942:sramecc+:xnack-'\n"
        "    fast = arch.startswith(('gfx90a', 'gfx94', 'gfx95'))\n"
        "else:\n    fast = torch.cuda.get_device_capability() >= (8, 0)\n"
        "# or ask for the feature: torch.cuda.is_bf16_supported()\n"
    ),
    fix=(
        "Ask for the feature itself where PyTorch offers a query (`is_bf16_supported()`), or "
        "branch on `torch.version.hip` and test the gfx name from `gcnArchName` on ROCm."
    ),
    mechanical=False,
    references=(
        "https://github.com/pytorch/torchtitan/pull/4778",
        "https://github.com/vllm-project/vllm/issues/40620",
        "https://github.com/ROCm/pytorch/pull/1846",
    ),
)

TF32_FLAG = rule(
    id="GP204",
    slug="tf32-flag",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="Sets a TF32 or reduced-precision switch that ROCm honours only in part",
    what=(
        "Finds assignments to `torch.backends.cuda.matmul.allow_tf32` and "
        "`torch.backends.cudnn.allow_tf32` (other than `= False`), to "
        "`allow_fp16_reduced_precision_reduction` / `allow_bf16_reduced_precision_reduction`, "
        "and `torch.backends.cudnn.flags(allow_tf32=…)`."
    ),
    why=(
        "TF32 is an NVIDIA Ampere+ format. On ROCm, PyTorch maps `allow_tf32` to hipBLASLt's "
        "XF32 only on MI300-class GPUs (gfx942) and recent releases, with numerics that differ "
        "from NVIDIA's; on other AMD GPUs the switch does nothing, so FP32 matmuls run at full "
        "FP32 speed. AMD's PyTorch compatibility table lists the cuDNN TF32 switch and the "
        "reduced-precision-reduction switches as unsupported, so a request for stricter "
        "accuracy through them is silently dropped."
    ),
    example="torch.backends.cuda.matmul.allow_tf32 = True\ntorch.backends.cudnn.allow_tf32 = True\n",
    instead=(
        "torch.set_float32_matmul_precision('high')  # the portable knob\n"
        "# then measure speed and accuracy on the AMD GPU you target\n"
    ),
    fix=(
        "Use `torch.set_float32_matmul_precision`, and do not rely on TF32 speed or on "
        "reduced-precision settings on ROCm: measure on the target GPU."
    ),
    mechanical=False,
    references=(
        f"{_PYTORCH_HIP_NOTES}#tensorfloat-32-tf32-on-rocm",
        "https://github.com/pytorch/pytorch/issues/130600",
        _PYTORCH_ROCM_COMPAT,
    ),
)

CUDNN_BENCHMARK = rule(
    id="GP205",
    slug="cudnn-benchmark",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="Turns on cudnn.benchmark, which on ROCm runs MIOpen's exhaustive kernel search",
    what=(
        "Finds `torch.backends.cudnn.benchmark = True` (or any value other than False) and "
        "`torch.backends.cudnn.flags(benchmark=True)`."
    ),
    why=(
        "On ROCm the cuDNN switches drive MIOpen. With benchmark on, MIOpen does an "
        "exhaustive search for every new convolution shape and writes its find database; "
        "on a cold cache that can take minutes per shape (PyTorch's own CI measured ~13 "
        "minutes for one 3-D convolution), and with changing input shapes it never ends. "
        "The search results live in MIOpen's user database (~/.config/miopen), which a "
        "fresh container does not have."
    ),
    example="torch.backends.cudnn.benchmark = True\n",
    instead=(
        "torch.backends.cudnn.benchmark = not torch.version.hip  # or keep it, and\n"
        "# persist MIOpen's database (MIOPEN_USER_DB_PATH) between runs;\n"
        "# MIOPEN_FIND_MODE=FAST trades speed for a quick start\n"
    ),
    fix=(
        "Keep benchmark on only for fixed shapes, and persist MIOpen's user database across "
        "runs; otherwise turn it off on ROCm or set MIOPEN_FIND_MODE=FAST."
    ),
    mechanical=False,
    references=(
        "https://github.com/pytorch/pytorch/pull/145294",
        "https://github.com/pytorch/pytorch/pull/179795",
    ),
)

NVIDIA_TOOL_CALL = rule(
    id="GP206",
    slug="nvidia-tool-call",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Runs an NVIDIA command-line tool (nvidia-smi, nvcc, nsys…) that ROCm machines lack",
    what=(
        "Finds `subprocess` calls, `os.system`, `os.popen`, `os.exec*`/`os.spawn*`, asyncio "
        "subprocesses and `shutil.which` whose command (a literal string, list or f-string) "
        "starts an NVIDIA tool: nvidia-smi, nvcc, nvprof, nsys, ncu, cuda-gdb, "
        "compute-sanitizer, cuobjdump, nvdisasm, dcgmi, deviceQuery. In notebooks, `!` shell "
        "lines and `%%bash` cells are read too."
    ),
    why=(
        "These tools ship with the NVIDIA driver or CUDA toolkit and are not on a ROCm "
        "machine: the call raises FileNotFoundError or returns an error, and code that parses "
        "its output (GPU count, memory, utilisation) breaks. `shutil.which('nvidia-smi')` "
        "returns None, so code using it to detect a GPU decides there is none."
    ),
    example=(
        "out = subprocess.check_output(['nvidia-smi', '--query-gpu=memory.used', '--format=csv'])\n"
    ),
    instead=(
        "# amd-smi (rocm-smi on older releases), hipcc, rocprofv3, rocprof-compute, rocgdb,\n"
        "# rocminfo; or, vendor-neutral, ask PyTorch:\n"
        "free, total = torch.cuda.mem_get_info()\n"
    ),
    fix=(
        "Call the ROCm tool named in the finding (its options and output format differ), or "
        "get the information from PyTorch's torch.cuda API, which works on both."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/amdsmi/en/latest/",
        "https://rocm.docs.amd.com/en/latest/compatibility/compatibility-matrix.html",
    ),
)

CUDA_ENV_VAR = rule(
    id="GP207",
    slug="cuda-env-var",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.HIGH,
    summary="Reads or sets a CUDA environment variable that ROCm spells differently",
    what=(
        "Finds `os.environ[...]`, `os.environ.get/setdefault/pop/update`, `os.getenv`, "
        "`os.putenv`, `name in os.environ`, `env=` dictionaries given to calls, copies of "
        "`os.environ`, and notebook `%env` lines, for CUDA-side variables whose name ROCm does "
        "not read, as listed in gpuport's knowledge base: CUDA_VISIBLE_DEVICES, "
        "NVIDIA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, TORCH_CUDA_ARCH_LIST, CUDA_HOME, "
        "CUDA_PATH, CUDA_DEVICE_ORDER and others. Variables the knowledge base marks as still "
        "honoured on ROCm are left alone. Reading CUDA_HOME/CUDA_PATH is MEDIUM: they are "
        "unset on ROCm machines."
    ),
    why=(
        "ROCm selects GPUs with HIP_VISIBLE_DEVICES (HIP) and ROCR_VISIBLE_DEVICES (the whole "
        "stack; AMD recommends it on Linux). HIP has honoured CUDA_VISIBLE_DEVICES for "
        "portability, but schedulers and AMD's device plugins set the ROCm names, so code that "
        "reads CUDA_VISIBLE_DEVICES to count or pick GPUs sees nothing, and indices are "
        "relative when both are set. Kernel serialisation is AMD_SERIALIZE_KERNEL / "
        "HIP_LAUNCH_BLOCKING, extension builds read PYTORCH_ROCM_ARCH (gfx names) instead of "
        "TORCH_CUDA_ARCH_LIST, and the toolkit lives in ROCM_PATH/ROCM_HOME (/opt/rocm), "
        "not CUDA_HOME."
    ),
    example=(
        "os.environ['CUDA_VISIBLE_DEVICES'] = str(local_rank)\n"
        "n_gpus = len(os.environ.get('CUDA_VISIBLE_DEVICES', '').split(','))\n"
    ),
    instead=(
        "visible = os.environ.get('HIP_VISIBLE_DEVICES') or os.environ.get('CUDA_VISIBLE_DEVICES')\n"
        "n_gpus = torch.cuda.device_count()  # vendor-neutral\n"
    ),
    fix=(
        "Read the ROCm names as well (or ask torch.cuda.device_count()), and set "
        "HIP_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES, PYTORCH_ROCM_ARCH or ROCM_PATH on ROCm."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/HIP/en/docs-6.4.0/reference/env_variables.html",
        "https://rocm.docs.amd.com/en/latest/conceptual/gpu-isolation.html",
        "https://github.com/pytorch/pytorch/issues/132570",
    ),
)

NCCL_ENV_VAR = rule(
    id="GP208",
    slug="nccl-env-var",
    category=Category.PYTHON,
    severity=Severity.INFO,
    confidence=Confidence.HIGH,
    summary="Sets or reads an NCCL_* variable; RCCL reads most of them, some mean nothing there",
    what=(
        "Finds the same kinds of environment access as GP207 for names starting with NCCL_. "
        "It reports each variable once per file: INFO in general, LOW for variables that "
        "tune NVIDIA-only fabric (NVLink SHARP / NVLS, multi-node NVLink, CollNet)."
    ),
    why=(
        "On ROCm, `torch.distributed`'s 'nccl' backend is RCCL, which reads the NCCL_* names "
        "(NCCL_DEBUG, NCCL_SOCKET_IFNAME, NCCL_IB_*, NCCL_ALGO, NCCL_PROTO…) and adds RCCL_* "
        "ones. Values tuned for an NVIDIA topology may not suit an AMD one (Infinity Fabric, "
        "xGMI), and NVLS / MNNVL / CollNet switches have no effect."
    ),
    example="os.environ['NCCL_NVLS_ENABLE'] = '1'\nos.environ.setdefault('NCCL_DEBUG', 'WARN')\n",
    instead="os.environ.setdefault('NCCL_DEBUG', 'WARN')  # RCCL reads it too\n",
    fix=(
        "Keep the NCCL_* variables RCCL documents, drop NVIDIA-fabric ones, and re-tune "
        "algorithm/protocol choices on the AMD system."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/rccl/en/latest/api-reference/env-variables.html",
    ),
)

DEVICE_NAME_MATCH = rule(
    id="GP209",
    slug="device-name-match",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Matches the GPU name against NVIDIA product names",
    what=(
        "Finds `torch.cuda.get_device_name()` and `get_device_properties(…).name` results "
        "(also lower-/upper-cased, and through the names they are assigned to) tested with "
        "`in`, `==`, `.startswith()`, `.find()` or `re.search()` against strings such as "
        "'A100', 'H100', 'Tesla' or 'NVIDIA'. Checks that also name an AMD product, or that "
        "sit behind a ROCm test, are left alone."
    ),
    why=(
        "On ROCm the name is AMD's ('AMD Instinct MI300X', 'AMD Radeon RX 7900 XTX'), so an "
        "NVIDIA name test always fails: batch sizes, kernels or memory limits chosen by name "
        "fall back to the slowest or wrong default."
    ),
    example="if 'A100' in torch.cuda.get_device_name():\n    batch_size = 64\n",
    instead=(
        "free, total = torch.cuda.mem_get_info()     # size by memory, not by name\n"
        "arch = torch.cuda.get_device_properties(0).gcnArchName  # on ROCm: gfx942…\n"
    ),
    fix=(
        "Decide from measurable properties (memory, `is_bf16_supported()`, gfx name on ROCm) "
        "rather than from the marketing name, or add the AMD product names you target."
    ),
    mechanical=False,
    references=(f"{_PYTORCH_HIP_NOTES}#checking-for-hip",),
)

CUDA_EXTENSION_BUILD = rule(
    id="GP210",
    slug="cuda-extension-build",
    category=Category.PYTHON,
    severity=Severity.INFO,
    confidence=Confidence.HIGH,
    summary="Builds a PyTorch CUDA extension; on ROCm PyTorch hipifies its sources at build time",
    what=(
        "Finds `torch.utils.cpp_extension.CUDAExtension(...)`, `load(...)` with .cu sources "
        "or `with_cuda=True`, and `load_inline(..., cuda_sources=...)`, and names the kernel "
        "files when the sources are written as a literal list. It is LOW when the nvcc flags "
        "name NVIDIA architectures (-gencode, -arch=sm_XX)."
    ),
    why=(
        "This path usually works: on a ROCm build of PyTorch these helpers run hipify over "
        "the CUDA sources (writing .hip copies) and compile them with hipcc. What hipify "
        "cannot translate — inline PTX, warp-size-32 assumptions, CUDA-only libraries — "
        "breaks the build or the results, so the named kernel files are the ones to review "
        "(gpuport's GP3xx rules scan them). NVIDIA architecture flags do not apply; ROCm "
        "targets come from PYTORCH_ROCM_ARCH."
    ),
    example=(
        "CUDAExtension('fused_ops', ['csrc/ops.cpp', 'csrc/ops_kernel.cu'],\n"
        "              extra_compile_args={'nvcc': ['-gencode=arch=compute_80,code=sm_80']})\n"
    ),
    instead=(
        "CUDAExtension('fused_ops', ['csrc/ops.cpp', 'csrc/ops_kernel.cu'],\n"
        "              extra_compile_args={'nvcc': [] if torch.version.hip else NVCC_ARCH_FLAGS})\n"
        "# build with PYTORCH_ROCM_ARCH=gfx942 (for example)\n"
    ),
    fix=(
        "Build the extension on a ROCm PyTorch, keep NVIDIA-only nvcc flags out of the ROCm "
        "build, set PYTORCH_ROCM_ARCH, and review the kernel files for GP3xx findings."
    ),
    mechanical=False,
    references=("https://github.com/ROCm/pytorch/wiki/Enabling-PyTorch-CUDA-extensions-for-ROCm",),
)

INLINE_PTX = rule(
    id="GP211",
    slug="inline-ptx",
    category=Category.PYTHON,
    severity=Severity.HIGH,
    confidence=Confidence.HIGH,
    summary="Embeds NVIDIA PTX assembly (Triton inline_asm_elementwise or CUDA source strings)",
    what=(
        "Finds `triton.language.inline_asm_elementwise` whose asm text is PTX (typed opcodes "
        "such as `mov.u32`, `cvt.rn.f16.f32`, special registers such as `%laneid`), and "
        "CUDA source strings in Python (for `load_inline`, CuPy `RawKernel`…) that contain "
        '`asm("…")` with PTX. When the asm text is not a literal it still reports, with low '
        "confidence."
    ),
    why=(
        "PTX is NVIDIA's virtual instruction set; AMD GPUs run AMDGCN code. Triton on ROCm and "
        "hipcc cannot assemble PTX, so the kernel fails to compile. The same operation needs "
        "AMDGCN assembly, a portable `tl` expression, or a HIP intrinsic."
    ),
    example=(
        "y = tl.inline_asm_elementwise('cvt.rn.f16x2.f32 $0, $2, $1;', '=r,r,r', [a, b],\n"
        "                              dtype=tl.float16, is_pure=True, pack=2)\n"
    ),
    instead=(
        "y = b.to(tl.float16)  # let Triton pick the instruction on each backend\n"
        "# or branch on the backend and give AMDGCN asm (v_cvt_pkrtz_f16_f32) on ROCm\n"
    ),
    fix=(
        "Replace the PTX with a portable Triton expression, or branch on the backend and "
        "supply AMDGCN assembly or a HIP intrinsic for ROCm."
    ),
    mechanical=False,
    references=(
        "https://triton-lang.org/main/python-api/generated/triton.language.inline_asm_elementwise.html",
        "https://docs.nvidia.com/cuda/inline-ptx-assembly/index.html",
        "https://rocm.docs.amd.com/projects/HIP/en/latest/reference/cpp_language_extensions.html",
    ),
)

HARDCODED_WARP_SIZE = rule(
    id="GP212",
    slug="hardcoded-warp-size",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.MEDIUM,
    summary="Hard-codes a warp size of 32 in Python-side kernel configuration",
    what=(
        "Finds `WARP_SIZE = 32`-style constants (warp_size, threads_per_warp, warp_threads…), "
        "keyword arguments and dict keys with those names set to 32, `num_warps * 32`, and "
        "`num_warps = threads // 32`."
    ),
    why=(
        "AMD's CDNA GPUs (MI100 to MI355) execute wavefronts of 64 threads; RDNA runs 32 or 64. "
        "In Triton on ROCm one 'warp' of `num_warps` is a 64-thread wavefront. A block size "
        "computed as `num_warps * 32`, or a warp-synchronous reduction sized for 32 lanes, "
        "launches half the threads it should or reads the wrong lanes."
    ),
    example="WARP_SIZE = 32\nblock = num_warps * 32\n",
    instead=(
        "props = torch.cuda.get_device_properties(0)\n"
        "WARP_SIZE = props.warp_size  # 64 on CDNA, 32 on NVIDIA\n"
        "block = num_warps * WARP_SIZE\n"
    ),
    fix=(
        "Query the warp size from the device (`torch.cuda.get_device_properties(i).warp_size`"
        ", Triton's target info) instead of writing 32."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/HIP/en/docs-6.1.2/understand/hardware_implementation.html",
        "https://github.com/pytorch/pytorch/pull/128449",
        "https://github.com/ROCm/pytorch/pull/1417",
    ),
)

NVTX_MARKERS = rule(
    id="GP213",
    slug="nvtx-markers",
    category=Category.PYTHON,
    severity=Severity.INFO,
    confidence=Confidence.HIGH,
    summary="Uses NVTX profiler markers; on ROCm they become rocTX ranges with fewer options",
    what=(
        "Reports the first `torch.cuda.nvtx.*` (range_push, range_pop, range, mark) or "
        "`nvtx.*` call in a file, once."
    ),
    why=(
        "On a ROCm build `torch.cuda.nvtx` calls rocTX: the ranges appear in rocprofv3 / "
        "rocprof-sys traces (with marker tracing on), not in Nsight Systems, and NVTX domains, "
        "categories and colours are dropped. Nothing breaks; profiling scripts need the ROCm "
        "profiler."
    ),
    example="torch.cuda.nvtx.range_push('forward')\n",
    instead="torch.cuda.nvtx.range_push('forward')  # view with rocprofv3 --marker-trace\n",
    fix="Keep the markers; profile with rocprofv3 or rocprof-sys instead of nsys.",
    mechanical=False,
    references=("https://github.com/pytorch/pytorch/pull/92199",),
)

JITERATOR = rule(
    id="GP214",
    slug="jiterator",
    category=Category.PYTHON,
    severity=Severity.INFO,
    confidence=Confidence.MEDIUM,
    summary="Compiles a CUDA C++ string at run time with torch.cuda.jiterator",
    what="Finds calls to `torch.cuda.jiterator._create_jit_fn` and its siblings.",
    why=(
        "PyTorch enabled the jiterator on ROCm (it compiles with hiprtc instead of nvrtc), so "
        "simple element-wise code works. CUDA-only intrinsics or headers in the code string "
        "fail to compile at the first call, on the GPU, not at import time."
    ),
    example="fn = torch.cuda.jiterator._create_jit_fn('template <typename T> T f(T x) { return x; }')\n",
    instead="# keep it, and run it once on the ROCm machine; or write the op in torch / Triton\n",
    fix="Run the jitted function on ROCm early (a unit test) and keep the code string portable.",
    mechanical=False,
    references=("https://github.com/pytorch/pytorch/pull/77982",),
)

CUDNN_ATTENTION = rule(
    id="GP215",
    slug="cudnn-attention",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Selects the cuDNN attention backend, which ROCm builds do not have",
    what=(
        "Finds `sdpa_kernel(SDPBackend.CUDNN_ATTENTION)` (cuDNN as the only choice), "
        "`torch.backends.cuda.sdp_kernel(enable_cudnn=True, …)` with every other backend off, "
        "direct calls of `_scaled_dot_product_cudnn_attention`, and (LOW) "
        "`torch.backends.cuda.enable_cudnn_sdp(True)`."
    ),
    why=(
        "cuDNN is NVIDIA's library. On ROCm, PyTorch reports cuDNN attention as unavailable, "
        "so forcing it makes every `scaled_dot_product_attention` call fail with 'No available "
        "kernel'; `enable_cudnn_sdp(True)` simply has no effect."
    ),
    example="with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):\n    out = F.scaled_dot_product_attention(q, k, v)\n",
    instead=(
        "with sdpa_kernel([SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,\n"
        "                  SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):\n"
        "    out = F.scaled_dot_product_attention(q, k, v)\n"
    ),
    fix="Give sdpa_kernel a priority list that ends with backends ROCm has (flash, efficient, math).",
    mechanical=False,
    references=(
        "https://github.com/pytorch/pytorch/issues/168873",
        "https://github.com/ostris/ai-toolkit/pull/933",
        _PYTORCH_ROCM_COMPAT,
    ),
)

SDPA_NO_FALLBACK = rule(
    id="GP216",
    slug="sdpa-no-fallback",
    category=Category.PYTHON,
    severity=Severity.LOW,
    confidence=Confidence.MEDIUM,
    summary="Pins attention to the flash / memory-efficient kernels with no math fallback",
    what=(
        "Finds `sdpa_kernel(...)` given only FLASH_ATTENTION and/or EFFICIENT_ATTENTION, "
        "`torch.backends.cuda.sdp_kernel(..., enable_math=False)` and "
        "`torch.backends.cuda.enable_math_sdp(False)`."
    ),
    why=(
        "On ROCm the flash and memory-efficient kernels come from AOTriton or Composable "
        "Kernel, which cover fewer GPUs (MI200/MI300/MI350, RDNA3 partly or behind "
        "TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL) and fewer shapes (head dimension, masks) "
        "than on NVIDIA. Without the math backend to fall back on, such a call fails with "
        "'No available kernel' instead of running slower."
    ),
    example="with sdpa_kernel(SDPBackend.FLASH_ATTENTION):\n    out = F.scaled_dot_product_attention(q, k, v)\n",
    instead=(
        "with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]):\n"
        "    out = F.scaled_dot_product_attention(q, k, v)\n"
    ),
    fix="Keep SDPBackend.MATH (or EFFICIENT_ATTENTION) in the list as a fallback on ROCm.",
    mechanical=False,
    references=(
        "https://github.com/pytorch/pytorch/issues/138864",
        "https://github.com/ROCm/TheRock/issues/1946",
    ),
)

TRITON_CUDA_LIBDEVICE = rule(
    id="GP217",
    slug="triton-cuda-libdevice",
    category=Category.PYTHON,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="Uses Triton's CUDA-only libdevice module (triton.language.extra.cuda)",
    what=(
        "Finds imports from `triton.language.extra.cuda` and uses of `tl.extra.cuda.libdevice.*`."
    ),
    why=(
        "`triton.language.extra.cuda.libdevice` calls NVIDIA's `__nv_*` math library, which "
        "the AMD backend does not link, so kernels using it fail to compile on ROCm. Triton's "
        "`triton.language.extra.libdevice` dispatches to the CUDA or HIP library for the "
        "active target (some functions exist only on CUDA)."
    ),
    example="from triton.language.extra.cuda import libdevice\n",
    instead="from triton.language.extra import libdevice\n",
    fix="Import libdevice from `triton.language.extra` and check each function exists for HIP.",
    mechanical=False,
    references=(
        "https://github.com/triton-lang/triton/pull/3825",
        "https://github.com/triton-lang/triton/issues/10375",
    ),
)


# --------------------------------------------------------------------------------------------
# The checker
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hit:
    """A rule firing at a place in one parsed text; the scanner turns it into a Finding."""

    rule: Rule
    line: int
    column: int
    message: str
    severity: Severity | None = None
    confidence: Confidence | None = None
    fix: str | None = None
    references: tuple[str, ...] = ()


_CAPABILITY = "torch.cuda.get_device_capability"
_PROPERTIES = "torch.cuda.get_device_properties"
_DEVICE_NAME = "torch.cuda.get_device_name"
_CUDA_VERSION = "torch.version.cuda"
_ENVIRON = "os.environ"
_CPP_EXTENSION = "torch.utils.cpp_extension"
_TRITON_CUDA_EXTRA = "triton.language.extra.cuda"

_TF32_SWITCHES = frozenset(
    {"torch.backends.cuda.matmul.allow_tf32", "torch.backends.cudnn.allow_tf32"}
)
_REDUCED_PRECISION_SWITCHES = frozenset(
    {
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction",
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction",
    }
)
_CUDNN_BENCHMARK = "torch.backends.cudnn.benchmark"
_FUNCTION_TYPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}  # node type -> fields to walk into

# Calls that start a process, and the position of the command (or program) argument.
_PROCESS_CALLS: dict[str, int] = {
    "subprocess.run": 0,
    "subprocess.call": 0,
    "subprocess.check_call": 0,
    "subprocess.check_output": 0,
    "subprocess.Popen": 0,
    "subprocess.getoutput": 0,
    "subprocess.getstatusoutput": 0,
    "os.system": 0,
    "os.popen": 0,
    "os.execv": 0,
    "os.execve": 0,
    "os.execvp": 0,
    "os.execvpe": 0,
    "os.execl": 0,
    "os.execle": 0,
    "os.execlp": 0,
    "os.execlpe": 0,
    "os.spawnv": 1,
    "os.spawnve": 1,
    "os.spawnvp": 1,
    "os.spawnvpe": 1,
    "os.spawnl": 1,
    "os.spawnle": 1,
    "os.spawnlp": 1,
    "os.spawnlpe": 1,
    "asyncio.create_subprocess_exec": 0,
    "asyncio.create_subprocess_shell": 0,
    "shutil.which": 0,
    "pexpect.run": 0,
    "pexpect.spawn": 0,
}
_COMMAND_KEYWORDS = ("args", "cmd", "command", "file", "path")

# NVIDIA command-line tools looked for in commands. The knowledge base (kb.find_command)
# says what each becomes on ROCm and may name more tools.
_NVIDIA_TOOLS = frozenset(
    {
        "nvidia-smi",
        "nvcc",
        "nvprof",
        "nsys",
        "ncu",
        "nv-nsight-cu-cli",
        "cuda-gdb",
        "cuda-memcheck",
        "compute-sanitizer",
        "cuobjdump",
        "nvdisasm",
        "dcgmi",
        "deviceQuery",
    }
)
# Words that only run the next word of a command line.
_COMMAND_WRAPPERS = frozenset(
    {"sudo", "env", "exec", "time", "nohup", "timeout", "watch", "bash", "sh", "zsh", "command"}
)
_ROCM_TOOL_RE = re.compile(r"^(?:hip|roc|amd)")
_SHELL_SEPARATORS = re.compile(r"\|\|?|&&|;|\$\(|`|[()\n]")

# Environment variables GP207 reports even when the knowledge base has no entry for them,
# with the severity of reading and of setting them (others: LOW). CUDA_HOME/CUDA_PATH are
# unset on ROCm machines, so reading them tends to fail outright.
_CUDA_ENV: dict[str, tuple[Severity, Severity]] = {
    "CUDA_VISIBLE_DEVICES": (Severity.LOW, Severity.LOW),
    "NVIDIA_VISIBLE_DEVICES": (Severity.LOW, Severity.LOW),
    "CUDA_LAUNCH_BLOCKING": (Severity.LOW, Severity.LOW),
    "TORCH_CUDA_ARCH_LIST": (Severity.LOW, Severity.LOW),
    "CUDA_HOME": (Severity.MEDIUM, Severity.LOW),
    "CUDA_PATH": (Severity.MEDIUM, Severity.LOW),
    "CUDA_ROOT": (Severity.MEDIUM, Severity.LOW),
}
# NCCL variables for NVIDIA-only fabric features (NVLink SHARP, multi-node NVLink, CollNet);
# RCCL's variable list has no counterpart for them.
# https://rocm.docs.amd.com/projects/rccl/en/latest/api-reference/env-variables.html
_NCCL_FABRIC_PREFIXES = ("NCCL_NVLS", "NCCL_MNNVL", "NCCL_COLLNET")

# PTX: typed opcodes (mov.u32, cvt.rn.f16x2.f32, ld.global.b64) and special registers.
_PTX_RE = re.compile(
    r"%(?:laneid|warpid|nwarpid|smid|nsmid|lanemask_\w+|clock(?:64)?|globaltimer|"
    r"(?:n?tid|n?ctaid)\.[xyz])\b"
    r"|\b[a-z][a-z0-9]*(?:\.[a-z0-9]+)*\.(?:[usbf]|bf|e4m3|e5m2)(?:8|16|32|64)(?:x[24])?\b"
)
_ASM_CALL_RE = re.compile(r"\basm\s*(?:volatile\s*|__volatile__\s*)?\(")
_SM_NAME_RE = re.compile(r"^(?:sm|compute)_\d{2,3}[a-z]?$")
_AMD_NAME_RE = re.compile(r"(?i)\b(?:amd|radeon|instinct|mi\d{2,3}[a-z]?|gfx\d+|navi\d*)\b")
_ROCM_WORD_RE = re.compile(r"(?i)\b(?:rocm|hip|amd|gfx\d*)\b")
_ROCM_IDENTIFIER_PARTS = frozenset({"hip", "rocm", "amd", "hipcc", "gcn"})
_IDENTIFIER_SPLIT = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])")
_WARP_SIZE_NAME_RE = re.compile(
    r"(?i)^_*(?:k_?)?(?:warp_?(?:size|sz|threads|width|lanes)|threads_?per_?warp|lanes_?per_?warp)$"
)
_NVIDIA_ARCH_FLAG_RE = re.compile(
    r"-gencode|--generate-code|arch=(?:sm|compute)_|-arch[= ]?(?:sm|compute)_|code=sm_|"
    r"--gpu-architecture"
)
_NAME_TEST_METHODS = frozenset(
    {"startswith", "endswith", "find", "rfind", "index", "rindex", "count", "__contains__"}
)
_NAME_KEEPING_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip"})
_REGEX_CALLS = frozenset({"re.search", "re.match", "re.fullmatch", "re.findall", "re.finditer"})
# Calls that turn a version string into numbers: given None (torch.version.cuda on ROCm)
# they raise. Other calls only pass the value on, which is not reported.
_PARSING_FUNCTIONS = frozenset(
    {"float", "int", "tuple", "list", "len", "map", "Version", "parse", "parse_version"}
    | {"LooseVersion", "StrictVersion", "version_tuple"}
)
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})

_STATUS_SEVERITY = {
    kb.PackageStatus.NOT_SUPPORTED: Severity.HIGH,
    kb.PackageStatus.NOT_APPLICABLE: Severity.MEDIUM,
    kb.PackageStatus.PARTIAL: Severity.MEDIUM,
    kb.PackageStatus.NEEDS_ROCM_BUILD: Severity.LOW,
}
_STATUS_WORDS = {
    kb.PackageStatus.NOT_SUPPORTED: "has no ROCm build",
    kb.PackageStatus.NOT_APPLICABLE: "is a CUDA-only artifact to drop on ROCm",
    kb.PackageStatus.PARTIAL: "works on ROCm only in part",
    kb.PackageStatus.NEEDS_ROCM_BUILD: "needs a ROCm build from another index or from source",
}
_CONFIDENCE_WORDS = {"high": Confidence.HIGH, "medium": Confidence.MEDIUM, "low": Confidence.LOW}

# Kinds of value the checker follows through assignments.
_CAP = "capability"  # the (major, minor) tuple, or one of its numbers
_PROPS = "properties"  # a torch.cuda.get_device_properties(...) object
_DEVNAME = "device-name"
_CUDAVER = "cuda-version"
_ENVIRON_COPY = "environ"


@dataclass(slots=True)
class _Scope:
    """Names bound in one function (or class, or the module) that matter to the rules."""

    module: bool = False
    shadowed: set[str] = field(default_factory=set)  # local names hiding an import alias
    kinds: dict[str, str] = field(default_factory=dict)  # name -> kind of value ("": none)


# Statements the checker may step over whole when their source shows nothing to look at.
_STATEMENT_TYPES = frozenset(
    t for t in vars(ast).values() if isinstance(t, type) and issubclass(t, ast.stmt)
)
_SCOPE_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

# What a statement's source must contain for a rule to fire in it, other than a tracked name
# (an import alias, or a name holding a followed value). Every rule that works without one
# needs one of these words in an identifier or a string literal written out in the source:
#   import  (Import, ImportFrom, __import__), asm (CUDA source strings with PTX),
#   sm_ / compute_ (architecture names compared), env (the env= argument of a call),
#   warp in any case (warp-size names: targets, keywords, dict keys, `num_warps * 32`).
# A string's value differs from its source only through escapes (any backslash counts) or
# implicit concatenation ("as" "m(": a closing quote, blanks or comments, an opening quote);
# non-ASCII sources are never stepped over (identifiers are NFKC-normalised).
_TRIGGERS = (
    rb"import|asm|sm_|compute_|env|(?i:warp)|\\"
    rb"|[\"'](?:[ \t\n\f]|#[^\n]*)*[A-Za-z]{0,3}[\"']"
)
_QUOTES = re.compile(rb"[\"']")
_TRIGGER_PATTERNS: dict[frozenset[str], re.Pattern[bytes]] = {}  # by the tracked names


class _Segments:
    """The source of statements, by the positions ``ast`` gives (UTF-8 byte columns).

    ``inert(node, …)`` is true only when no rule can fire inside ``node`` and walking it would
    change nothing the checker remembers: it names no tracked name and holds no trigger word.
    Bindings of untracked names inside a function or class only hide names that nothing
    follows, so they need no walk; at module level a string constant bound to a name is
    remembered (for commands such as ``subprocess.run(NVSMI)``), so statements there must also
    hold no string literal, unless they are functions or classes (their bodies bind locally).
    """

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._starts = [0, *(m.end() for m in re.finditer(rb"\n", data))]

    @classmethod
    def of(cls, text: str) -> _Segments | None:
        if text.startswith("\ufeff"):
            return None
        if "\r" in text:
            text = text.replace("\r\n", "\n")
            if "\r" in text:  # old Mac line ends: keep it simple and walk everything
                return None
        try:
            return cls(text.encode("utf-8"))
        except UnicodeEncodeError:
            return None

    @staticmethod
    def _pattern(names: frozenset[str]) -> re.Pattern[bytes]:
        pattern = _TRIGGER_PATTERNS.get(names)
        if pattern is None:
            words = sorted(n.encode() for n in names if n.isascii() and n.isidentifier())
            alternatives = [_TRIGGERS]
            if words:
                alternatives.append(rb"\b(?:" + b"|".join(re.escape(w) for w in words) + rb")\b")
            if len(_TRIGGER_PATTERNS) > 256:
                _TRIGGER_PATTERNS.clear()
            pattern = _TRIGGER_PATTERNS[names] = re.compile(b"|".join(alternatives))
        return pattern

    def inert(self, node: ast.stmt, names: frozenset[str], module_scope: bool) -> bool:
        end_line, end_column = node.end_lineno, node.end_col_offset
        if end_line is None or end_column is None:
            return False
        line, column = node.lineno, node.col_offset
        for decorator in getattr(node, "decorator_list", ()):
            line, column = min((line, column), (decorator.lineno, decorator.col_offset))
        starts = self._starts
        if end_line > len(starts) or line < 1:
            return False
        segment = self._data[starts[line - 1] + column : starts[end_line - 1] + end_column]
        if not segment.isascii():
            return False
        if module_scope and not isinstance(node, _SCOPE_STATEMENTS) and _QUOTES.search(segment):
            return False
        return self._pattern(names).search(segment) is None


class PythonChecker:
    """Finds GP2xx problems in parsed Python. One instance per file; a notebook's cells share it,
    so that an import in one cell resolves names in the next."""

    def __init__(self) -> None:
        self._aliases: dict[str, str] = {}
        self._module_scope = _Scope(module=True)
        self._scopes: list[_Scope] = [self._module_scope]
        self._parents: dict[ast.AST, ast.AST] = {}
        self._hits: list[Hit] = []
        self._fired: set[tuple[str, int, str]] = set()
        self._once: set[str] = set()  # per-file keys of rules that report once
        self._strings: dict[str, str] = {}  # module-level NAME = "literal"
        self._version_names: set[str] = set()  # names that may hold torch.version.cuda

    # -- entry points ------------------------------------------------------------------------

    def check(self, tree: ast.AST, text: str | None = None) -> list[Hit]:
        """The problems in ``tree``; line numbers are those of the text it was parsed from.

        Given ``text`` (exactly what ``tree`` was parsed from), statements whose source holds
        nothing any rule looks for are stepped over without walking them (see ``_Segments``).
        """
        start = len(self._hits)
        self._fired = set()
        self._parents = {}
        handlers = self._handlers
        parents = self._parents
        segments = _Segments.of(text) if text is not None else None
        stack: list[ast.AST | None] = [tree]
        # Iterative, in source order: deeply nested expressions must not exhaust the stack.
        while stack:
            node = stack.pop()
            if node is None:  # the end of a function or class body
                self._scopes.pop()
                continue
            kind = type(node)
            if (
                segments is not None
                and kind in _STATEMENT_TYPES
                and segments.inert(node, self._tracked_names(), self._scopes[-1].module)  # type: ignore[arg-type]
            ):
                continue
            handler = handlers.get(kind)
            if handler is not None:
                handler(node)
            if kind in _FUNCTION_TYPES:
                parameters = self._parameters(node.args)  # type: ignore[attr-defined]
                self._scopes.append(
                    _Scope(shadowed=parameters, kinds=dict.fromkeys(parameters, ""))
                )
                stack.append(None)
            elif kind is ast.ClassDef:
                self._scopes.append(_Scope())
                stack.append(None)
            fields = _CHILD_FIELDS.get(kind)
            if fields is None:  # leave out ctx/op leaves: a third of all nodes, none useful
                fields = _CHILD_FIELDS[kind] = tuple(
                    f for f in node._fields if f not in ("ctx", "op", "ops")
                )
            first = len(stack)
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, ast.AST):
                            parents[item] = node
                            stack.append(item)
                elif isinstance(value, ast.AST):
                    parents[value] = node
                    stack.append(value)
            stack[first:] = reversed(stack[first:])
        return self._hits[start:]

    def _tracked_names(self) -> frozenset[str]:
        """Every name through which a rule can see a followed value or an imported module."""
        names = set(self._aliases)
        names |= self._version_names
        for scope in self._scopes:  # a name bound to "" follows nothing (see _name_kind)
            names.update(name for name, kind in scope.kinds.items() if kind)
        return frozenset(names)

    def shell_command(self, text: str, line: int, column: int = 0) -> list[Hit]:
        """GP206 for a shell command line (a notebook ``!`` line or ``%%bash`` cell line)."""
        start = len(self._hits)
        for tool, entry in _tools_in(text):
            self._add(
                NVIDIA_TOOL_CALL,
                line,
                column,
                _tool_message(tool, entry, runs=True),
                key=tool,
                references=entry.sources if entry else (),
            )
        return self._hits[start:]

    def environment(self, name: str, line: int, write: bool) -> list[Hit]:
        """GP207/GP208 for a variable set outside Python code (a notebook ``%env`` line)."""
        start = len(self._hits)
        self._env_use(name, line, 0, write)
        return self._hits[start:]

    # -- dispatch ----------------------------------------------------------------------------

    @functools.cached_property
    def _handlers(self) -> dict[type[ast.AST], Callable[[Any], None]]:
        """Node type -> the method that looks at it (other nodes are only walked through)."""
        return {
            ast.Call: self._call,
            ast.Attribute: self._attribute,
            ast.Name: self._name,
            ast.Compare: self._compare,
            ast.Assign: self._assign,
            ast.AnnAssign: self._assign,
            ast.AugAssign: self._assign,
            ast.NamedExpr: self._assign,
            ast.Subscript: self._subscript,
            ast.Import: self._import,
            ast.ImportFrom: self._import_from,
            ast.BinOp: self._binop,
            ast.Constant: self._constant,
            ast.JoinedStr: self._fstring,
            ast.Dict: self._dict,
            ast.Delete: self._delete,
        }

    def _name(self, node: ast.Name) -> None:
        if (
            node.id in self._version_names
            and isinstance(node.ctx, ast.Load)
            and self._kind(node) == _CUDAVER
        ):
            self._cuda_version_use(node)

    def _constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and "asm" in node.value:
            self._embedded_asm(node, node.value)

    def _delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                self._subscript(target)

    def _add(
        self,
        rule_: Rule,
        line: int,
        column: int,
        message: str,
        *,
        key: str = "",
        severity: Severity | None = None,
        confidence: Confidence | None = None,
        fix: str | None = None,
        references: Iterable[str] = (),
    ) -> None:
        fired = (rule_.id, line, key)
        if fired in self._fired:  # one report per rule, line and subject
            return
        self._fired.add(fired)
        self._hits.append(
            Hit(rule_, line, column, message, severity, confidence, fix, tuple(references))
        )

    def _hit(
        self,
        rule_: Rule,
        node: ast.AST,
        message: str,
        *,
        key: str = "",
        severity: Severity | None = None,
        confidence: Confidence | None = None,
        fix: str | None = None,
        references: Iterable[str] = (),
    ) -> None:
        line = getattr(node, "lineno", 0)
        column = getattr(node, "col_offset", -1) + 1
        self._add(
            rule_,
            line,
            column,
            message,
            key=key,
            severity=severity,
            confidence=confidence,
            fix=fix,
            references=references,
        )

    # -- names -------------------------------------------------------------------------------

    @staticmethod
    def _parameters(args: ast.arguments) -> set[str]:
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        every += [a for a in (args.vararg, args.kwarg) if a is not None]
        return {a.arg for a in every}

    def _shadowed(self, name: str) -> bool:
        for scope in reversed(self._scopes):
            if scope.module:
                return False
            if name in scope.shadowed:
                return True
        return False

    def _qual(self, node: ast.AST) -> str | None:
        """The dotted name an expression stands for (``T.version.cuda`` -> ``torch.version.cuda``)."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or self._shadowed(node.id):
            return None
        base = self._aliases.get(node.id)
        if base is None:
            return None
        parts.append(base)
        return ".".join(reversed(parts))

    def _name_kind(self, name: str) -> str | None:
        for scope in reversed(self._scopes):
            if name in scope.kinds:
                return scope.kinds[name] or None  # "": a local name that follows nothing
        return None

    def _kind(self, node: ast.AST | None) -> str | None:
        """What kind of followed value an expression holds, if any."""
        if node is None:
            return None
        if isinstance(node, ast.Name):
            kind = self._name_kind(node.id)
            if kind is None:  # from os import environ; from torch.version import cuda
                kind = {_ENVIRON: _ENVIRON_COPY, _CUDA_VERSION: _CUDAVER}.get(
                    self._qual(node) or ""
                )
            return kind
        if isinstance(node, ast.Call):
            func = node.func
            qual = self._qual(func)
            if qual == _CAPABILITY:
                return _CAP
            if qual == _PROPERTIES:
                return _PROPS
            if qual == _DEVICE_NAME:
                return _DEVNAME
            if qual == f"{_ENVIRON}.copy" or (
                isinstance(func, ast.Name)
                and func.id == "dict"
                and node.args
                and self._is_environ(node.args[0])
            ):
                return _ENVIRON_COPY
            if isinstance(func, ast.Attribute) and func.attr in _NAME_KEEPING_METHODS:
                return _DEVNAME if self._kind(func.value) == _DEVNAME else None
            if isinstance(func, ast.Name) and func.id == "str" and node.args:
                return _DEVNAME if self._kind(node.args[0]) == _DEVNAME else None
            return None
        if isinstance(node, ast.Attribute):
            qual = self._qual(node)
            if qual == _CUDA_VERSION:
                return _CUDAVER
            if qual == _ENVIRON:
                return _ENVIRON_COPY
            if node.attr in ("major", "minor", "name"):
                base = self._kind(node.value)
                if base == _PROPS:
                    return {"major": _CAP, "minor": _CAP, "name": _DEVNAME}.get(node.attr)
            return None
        if isinstance(node, ast.Subscript):
            base = self._kind(node.value)
            return base if base in (_CAP, _DEVNAME) else None
        if isinstance(node, (ast.Tuple, ast.List)):
            return _CAP if any(self._kind(e) == _CAP for e in node.elts) else None
        if isinstance(node, ast.BinOp):
            pending: list[ast.AST] = [node]
            while pending:  # flattened: long arithmetic chains must not recurse
                item = pending.pop()
                if isinstance(item, ast.BinOp):
                    pending += (item.left, item.right)
                elif self._kind(item) == _CAP:
                    return _CAP
            return None
        # {**os.environ, "X": "1"}
        if isinstance(node, ast.Dict) and any(
            k is None and self._is_environ(v) for k, v in zip(node.keys, node.values, strict=True)
        ):
            return _ENVIRON_COPY
        return None

    def _is_environ(self, node: ast.AST) -> bool:
        return self._kind(node) == _ENVIRON_COPY

    # -- imports (GP201, GP217) --------------------------------------------------------------

    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self._aliases[alias.asname] = alias.name
            else:
                top = alias.name.split(".", 1)[0]
                self._aliases[top] = top
            self._imported_module(alias.name, node)

    def _import_from(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return  # relative: the project's own modules
        for alias in node.names:
            if alias.name == "*":
                self._imported_module(node.module, node)
                continue
            full = f"{node.module}.{alias.name}"
            self._aliases[alias.asname or alias.name] = full
            if full == _CUDA_VERSION:
                self._version_names.add(alias.asname or alias.name)
            self._imported_module(full, node, shown=node.module)

    def _imported_module(self, module: str, node: ast.AST, shown: str = "") -> None:
        """Checks an imported module; ``shown`` is the ``from`` part of ``from x import y``."""
        if module == _TRITON_CUDA_EXTRA or module.startswith(_TRITON_CUDA_EXTRA + "."):
            self._hit(
                TRITON_CUDA_LIBDEVICE,
                node,
                f"imports {module}: NVIDIA's libdevice, which Triton's AMD backend does not link",
            )
        package = kb.package_for_import(module)
        if package is None or package.status is kb.PackageStatus.WORKS:
            return
        if package.status is kb.PackageStatus.NEEDS_ROCM_BUILD and package.category == "framework":
            return  # only the install changes: the dependency rules (GP1xx) report it
        if f"import:{package.name}" in self._once or self._under_type_checking(node):
            return
        self._once.add(f"import:{package.name}")
        severity = _STATUS_SEVERITY[package.status]
        if not shown or kb.package_for_import(shown) is not package:
            shown = module  # `from numba import cuda`: the package is numba.cuda
        message = f"imports {shown}: {package.name} {_STATUS_WORDS[package.status]}"
        if self._import_guarded(node):
            severity = min(severity, Severity.LOW)
            message += " (optional here: the import is guarded by try/except)"
        self._hit(
            CUDA_ONLY_IMPORT,
            node,
            message,
            key=package.name,
            severity=severity,
            confidence=_CONFIDENCE_WORDS.get(package.confidence.lower(), Confidence.MEDIUM),
            fix=package.instead or None,
            references=package.sources,
        )

    def _ancestors(self, node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
        """(child, parent) pairs from ``node`` up to the root."""
        parent = self._parents.get(node)
        while parent is not None:
            yield node, parent
            node, parent = parent, self._parents.get(parent)

    def _under_type_checking(self, node: ast.AST) -> bool:
        for child, parent in self._ancestors(node):
            if isinstance(parent, ast.If) and child in parent.body:
                test = parent.test
                name = test.id if isinstance(test, ast.Name) else getattr(test, "attr", "")
                if name == "TYPE_CHECKING":
                    return True
        return False

    def _import_guarded(self, node: ast.AST) -> bool:
        for child, parent in self._ancestors(node):
            if isinstance(parent, ast.Try) and child in parent.body:
                for handler in parent.handlers:
                    caught = handler.type
                    if caught is None:
                        return True
                    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
                    for name in names:
                        ident = name.id if isinstance(name, ast.Name) else getattr(name, "attr", "")
                        if ident in _IMPORT_ERRORS:
                            return True
        return False

    # -- calls -------------------------------------------------------------------------------

    def _call(self, node: ast.Call) -> None:
        qual = self._qual(node.func)
        if qual is not None:
            self._qualified_call(node, qual)
        elif isinstance(node.func, ast.Name) and node.func.id == "__import__":
            module = _literal(_argument(node, 0, "name"))
            if module:
                self._imported_module(module, node)
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in _NAME_TEST_METHODS and self._kind(func.value) == _DEVNAME:
                self._device_name_test(node, _strings_in(node.args))
            elif func.attr in ("get", "setdefault", "pop") and self._is_environ(func.value):
                name = _literal(_argument(node, 0, "key"))
                if name:
                    self._env_use(name, node.lineno, node.col_offset + 1, func.attr != "get")
            elif func.attr == "update" and self._is_environ(func.value):
                for arg in node.args:
                    self._env_mapping(arg)
                for kw in node.keywords:
                    if kw.arg:
                        self._env_use(kw.arg, kw.value.lineno, kw.value.col_offset + 1, True)
        for kw in node.keywords:
            if kw.arg and _WARP_SIZE_NAME_RE.match(kw.arg) and _is_int(kw.value, 32):
                self._warp_size(kw.value, f"{kw.arg}=32")
            elif kw.arg == "env":
                self._env_mapping(kw.value)

    def _qualified_call(self, node: ast.Call, qual: str) -> None:
        if qual in _PROCESS_CALLS:
            self._process_call(node, qual)
        elif qual in ("os.getenv", "os.putenv", "os.unsetenv"):
            name = _literal(_argument(node, 0, "key"))
            if name:
                self._env_use(name, node.lineno, node.col_offset + 1, qual != "os.getenv")
        elif qual == "importlib.import_module":
            module = _literal(_argument(node, 0, "name"))
            if module and not module.startswith("."):
                self._imported_module(module, node)
        elif qual in _REGEX_CALLS:
            subject = _argument(node, 1, "string")
            if self._kind(subject) == _DEVNAME:
                self._device_name_test(node, _strings_in([_argument(node, 0, "pattern")]))
        elif qual.startswith(_CPP_EXTENSION + "."):
            self._cpp_extension(node, qual.rsplit(".", 1)[1])
        elif qual in (
            "triton.language.inline_asm_elementwise",
            "triton.language.core.inline_asm_elementwise",
        ):
            self._inline_asm(node)
        elif qual.startswith(("torch.cuda.nvtx.", "nvtx.")):
            if "nvtx" not in self._once:
                self._once.add("nvtx")
                self._hit(
                    NVTX_MARKERS,
                    node,
                    f"{qual}: on ROCm NVTX markers become rocTX ranges (rocprofv3, not Nsight)",
                )
        elif qual.startswith("torch.cuda.jiterator."):
            self._hit(
                JITERATOR,
                node,
                f"{qual} compiles CUDA C++ at run time: hiprtc on ROCm; keep the code portable",
            )
        elif qual == "torch.backends.cudnn.flags":
            self._cudnn_flags(node)
        else:
            self._attention_call(node, qual)

    def _cudnn_flags(self, node: ast.Call) -> None:
        for kw in node.keywords:
            if kw.arg == "benchmark" and not _is_false(kw.value):
                self._hit(CUDNN_BENCHMARK, kw.value, _BENCHMARK_MESSAGE)
            elif kw.arg == "allow_tf32" and not _is_false(kw.value):
                self._hit(TF32_FLAG, kw.value, _tf32_message("torch.backends.cudnn.allow_tf32"))

    def _attention_call(self, node: ast.Call, qual: str) -> None:
        if qual == "torch.nn.attention.sdpa_kernel":
            backends = _backend_names(_argument(node, 0, "backends"))
            if backends == {"CUDNN_ATTENTION"}:
                self._hit(CUDNN_ATTENTION, node, _CUDNN_ONLY_MESSAGE)
            elif backends and backends <= {"FLASH_ATTENTION", "EFFICIENT_ATTENTION"}:
                names = " and ".join(sorted(backends))
                self._hit(SDPA_NO_FALLBACK, node, _no_fallback_message(names))
        elif qual == "torch.backends.cuda.sdp_kernel":
            order = ("enable_flash", "enable_math", "enable_mem_efficient", "enable_cudnn")
            given = {name: _argument(node, i, name) for i, name in enumerate(order)}
            enabled = {name: value is None or not _is_false(value) for name, value in given.items()}
            others = ("enable_flash", "enable_math", "enable_mem_efficient")
            if (
                given["enable_cudnn"] is not None
                and enabled["enable_cudnn"]
                and not any(enabled[name] for name in others)
            ):
                self._hit(CUDNN_ATTENTION, node, _CUDNN_ONLY_MESSAGE)
            elif not enabled["enable_math"]:
                self._hit(
                    SDPA_NO_FALLBACK, node, _no_fallback_message("sdp_kernel(enable_math=False)")
                )
        elif qual == "torch.backends.cuda.enable_cudnn_sdp":
            if not _is_false(_argument(node, 0, "enabled")):
                self._hit(
                    CUDNN_ATTENTION,
                    node,
                    "enable_cudnn_sdp(True) has no effect on ROCm: there is no cuDNN attention",
                    severity=Severity.LOW,
                )
        elif qual == "torch.backends.cuda.enable_math_sdp":
            if _is_false(_argument(node, 0, "enabled")):
                self._hit(SDPA_NO_FALLBACK, node, _no_fallback_message("enable_math_sdp(False)"))
        elif qual.startswith("torch.ops.aten._scaled_dot_product_cudnn_attention"):
            self._hit(
                CUDNN_ATTENTION,
                node,
                "calls the cuDNN attention operator directly; ROCm builds do not provide it",
            )

    # -- processes and environment (GP206, GP207, GP208) -------------------------------------

    def _process_call(self, node: ast.Call, qual: str) -> None:
        position = _PROCESS_CALLS[qual]
        command: ast.AST | None = node.args[position] if len(node.args) > position else None
        if command is None:
            command = next((kw.value for kw in node.keywords if kw.arg in _COMMAND_KEYWORDS), None)
        looks_up = qual == "shutil.which"
        if isinstance(command, (ast.List, ast.Tuple)):
            # exec form: the program is the first word (after sudo, timeout…), unless it is a
            # shell given a script with -c
            words = [self._command_text(element) or "…" for element in command.elts]
            script = _shell_script(words)
            text, first_only = (script, False) if script is not None else (" ".join(words), True)
        else:
            text, first_only = self._command_text(command), looks_up
        if not text:
            return
        for tool, entry in _tools_in(text, first_only=first_only):
            self._hit(
                NVIDIA_TOOL_CALL,
                node,
                _tool_message(tool, entry, runs=not looks_up),
                key=tool,
                references=entry.sources if entry else (),
            )

    def _command_text(self, node: ast.AST | None) -> str:
        """The literal parts of a command: a string, a list of strings, an f-string…"""
        if node is None:
            return ""
        if isinstance(node, ast.Call) and self._qual(node.func) == "shlex.split" and node.args:
            return self._command_text(node.args[0])
        return self._string_value(node) or ""

    def _string_value(self, node: ast.AST | None) -> str | None:
        """A string expression's literal text: constants, f-string parts, names of constants."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        # Unknown parts become "…", glued to their neighbours so that f"{cuda}/bin/nvcc"
        # still ends in the program's name.
        if isinstance(node, ast.JoinedStr):
            return "".join(_literal(part) or "…" for part in node.values)
        if isinstance(node, ast.Name):
            return self._strings.get(node.id)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self._string_value(node.left), self._string_value(node.right)
            if left is None and right is None:
                return None
            return (left or "…") + (right or "…")
        return None

    def _env_mapping(self, node: ast.AST) -> None:
        """Variables set through a mapping: ``{"X": ...}``, ``dict(os.environ, X=...)``."""
        if isinstance(node, ast.Dict):
            for key in node.keys:
                name = _literal(key)
                if name and key is not None:
                    self._env_use(name, key.lineno, key.col_offset + 1, True)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "dict"
        ):
            for kw in node.keywords:
                if kw.arg:
                    self._env_use(kw.arg, kw.value.lineno, kw.value.col_offset + 1, True)
            for arg in node.args:
                self._env_mapping(arg)

    def _subscript(self, node: ast.Subscript) -> None:
        if self._is_environ(node.value):
            name = _literal(node.slice)
            if name:
                write = not isinstance(node.ctx, ast.Load)
                self._env_use(name, node.lineno, node.col_offset + 1, write)

    def _env_use(self, name: str, line: int, column: int, write: bool) -> None:
        verb = "sets" if write else "reads"
        entry = kb.find_env_var(name)
        if entry is not None and entry.name != name:
            entry = None  # a family entry (NCCL_*): nothing specific to say
        if name.startswith("NCCL_"):
            self._nccl_use(name, line, column, verb, entry)
            return
        if "CUDA" not in name and "NVIDIA" not in name:
            return  # ROCm's own or vendor-neutral variables
        if entry is not None and entry.honoured_on_rocm:
            return  # the CUDA name still works on ROCm
        if entry is None and name not in _CUDA_ENV:
            return
        read_severity, write_severity = _CUDA_ENV.get(name, (Severity.LOW, Severity.LOW))
        if entry is None:
            detail = "ROCm uses other names (see `gpuport explain GP207`)"
        elif entry.rocm_equivalent:
            detail = f"on ROCm: {entry.rocm_equivalent}"
        else:
            detail = "ROCm has no counterpart"
        fix = None
        if entry is not None:
            names = ", ".join(entry.rocm_names)
            if names:
                fix = f"{'Set' if write else 'Read'} {names} on ROCm. {entry.notes}".strip()
            elif entry.notes:
                fix = entry.notes
        self._add(
            CUDA_ENV_VAR,
            line,
            column,
            f"{verb} {name}: {detail}",
            key=name,
            severity=write_severity if write else read_severity,
            fix=fix,
            references=entry.sources if entry else (),
        )

    def _nccl_use(
        self, name: str, line: int, column: int, verb: str, entry: kb.EnvVar | None
    ) -> None:
        fabric = (entry is not None and not entry.honoured_on_rocm) or name.startswith(
            _NCCL_FABRIC_PREFIXES
        )
        if not fabric:
            if f"nccl:{name}" in self._once:
                return
            self._once.add(f"nccl:{name}")
        if fabric:
            message = f"{verb} {name}: RCCL has no such setting, so it does nothing on ROCm"
        else:
            message = (
                f"{verb} {name}: RCCL reads the NCCL_* names too; check the value suits the "
                "AMD system"
            )
        self._add(
            NCCL_ENV_VAR,
            line,
            column,
            message,
            key=name,
            severity=Severity.LOW if fabric else Severity.INFO,
            fix=entry.notes if entry is not None and entry.notes else None,
            references=entry.sources if entry else (),
        )

    # -- torch.version.cuda (GP202) ----------------------------------------------------------

    def _attribute(self, node: ast.Attribute) -> None:
        if node.attr != "cuda" or not isinstance(node.ctx, ast.Load):
            return  # both rules below look at an attribute named cuda
        qual = self._qual(node)
        if qual == _CUDA_VERSION:
            self._cuda_version_use(node)
        elif qual == _TRITON_CUDA_EXTRA:
            self._hit(
                TRITON_CUDA_LIBDEVICE,
                node,
                f"uses {qual}: NVIDIA's libdevice, which Triton's AMD backend does not link",
            )

    def _cuda_version_use(self, node: ast.expr) -> None:
        parent = self._parents.get(node)
        if isinstance(parent, ast.keyword):
            parent = self._parents.get(parent)
            if not (isinstance(parent, ast.Call) and _parsing_call(parent)):
                return  # passed on as a value: default=torch.version.cuda
            reason = "parses"
        elif isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node:
            reason = "parses"
        elif isinstance(parent, ast.Compare):
            reason = "compares"
        elif isinstance(parent, ast.Call) and node in parent.args:
            if not _parsing_call(parent):
                return
            reason = "parses"
        elif self._in_condition(node):
            reason = "branches on"
        else:
            return
        if self._rocm_guarded(node):
            return
        what = f"{node.id} (torch.version.cuda)" if isinstance(node, ast.Name) else _CUDA_VERSION
        consequence = (
            "so on ROCm this raises or picks the non-CUDA path"
            if reason == "parses"
            else "so ROCm takes the non-CUDA path"
        )
        self._hit(
            CUDA_VERSION_CHECK,
            node,
            f"{reason} {what}, which is None on ROCm builds (torch.version.hip is set there), "
            f"{consequence}",
        )

    def _in_condition(self, node: ast.AST) -> bool:
        child, parent = node, self._parents.get(node)
        while isinstance(parent, ast.BoolOp) or (
            isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)
        ):
            child, parent = parent, self._parents.get(parent)
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            return parent.test is child
        if isinstance(parent, ast.comprehension):
            return child in parent.ifs
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name):
            return parent.func.id == "bool"
        return False

    def _rocm_guarded(self, node: ast.AST) -> bool:
        """True when the code around ``node`` already tells ROCm apart (tests torch.version.hip,
        an is_rocm flag, a gfx name…): in the same condition or statement, the same if/elif
        chain, an enclosing if, or an earlier if in the same block."""
        for child, parent in self._ancestors(node):
            if isinstance(parent, ast.If):
                if _mentions_rocm(parent.test):
                    return True
                chain = parent
                while len(chain.orelse) == 1 and isinstance(chain.orelse[0], ast.If):
                    chain = chain.orelse[0]
                    if _mentions_rocm(chain.test):
                        return True
            elif isinstance(parent, (ast.While, ast.IfExp)):
                if _mentions_rocm(parent.test):
                    return True
            elif isinstance(parent, ast.BoolOp):
                if any(_mentions_rocm(value) for value in parent.values if value is not child):
                    return True
            elif isinstance(
                parent, (ast.Assign, ast.AnnAssign, ast.Return, ast.Expr, ast.Assert)
            ) and _mentions_rocm(parent):
                return True
            for name in ("body", "orelse", "finalbody"):
                block = getattr(parent, name, None)
                if isinstance(block, list) and child in block:
                    earlier = block[: block.index(child)]
                    if any(_rocm_early_exit(statement) for statement in earlier):
                        return True
            if isinstance(
                parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
            ):
                return False
        return False

    # -- comparisons (GP203, GP209, GP207) ---------------------------------------------------

    def _compare(self, node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]
        kinds = [self._kind(operand) for operand in operands]
        if _CAP in kinds:
            numbers = [
                o for o, k in zip(operands, kinds, strict=True) if k != _CAP and _number_like(o)
            ]
            if numbers and not self._rocm_guarded(node):
                shown = ast.unparse(numbers[0])
                self._hit(
                    DEVICE_CAPABILITY_GATE,
                    node,
                    f"compares the CUDA compute capability with {shown}: on ROCm it is the gfx "
                    "version ((9, 0) for MI200, (9, 4) for MI300), so this gate misfires",
                )
        for operand in operands:
            text = _literal(operand)
            if text and _SM_NAME_RE.match(text) and not self._rocm_guarded(node):
                self._hit(
                    DEVICE_CAPABILITY_GATE,
                    operand,
                    f"compares with the NVIDIA architecture name {text!r}; ROCm builds name "
                    "gfx targets (gfx90a, gfx942…)",
                )
        if _DEVNAME in kinds:
            others = [o for o, k in zip(operands, kinds, strict=True) if k != _DEVNAME]
            self._device_name_test(node, _strings_in(others))
        if (
            len(node.ops) == 1
            and isinstance(node.ops[0], (ast.In, ast.NotIn))
            and self._is_environ(node.comparators[0])
        ):
            name = _literal(node.left)
            if name:
                self._env_use(name, node.lineno, node.col_offset + 1, False)

    def _device_name_test(self, node: ast.AST, strings: list[str]) -> None:
        if not strings or any(_AMD_NAME_RE.search(s) for s in strings):
            return  # nothing literal to judge, or the code already names AMD products
        if self._rocm_guarded(node):
            return
        shown = ", ".join(repr(s) for s in strings[:3])
        self._hit(
            DEVICE_NAME_MATCH,
            node,
            f"matches the GPU name against {shown}; on ROCm the name is AMD's "
            "('AMD Instinct MI300X'…), so the test is always false there",
        )

    # -- assignments (GP204, GP205, GP212; following values) ---------------------------------

    def _assign(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr) -> None:
        targets: list[ast.expr]
        value: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AugAssign):
            targets, value = [node.target], None
        else:
            targets, value = [node.target], node.value
        kind = (
            self._kind(value) if value is not None and not isinstance(node, ast.AugAssign) else None
        )
        for target in targets:
            if not isinstance(node, ast.AugAssign):
                self._bind(target, kind, value)
            if value is not None:
                self._assignment_rules(target, value)

    def _bind(self, target: ast.expr, kind: str | None, value: ast.expr | None) -> None:
        scope = self._scopes[-1]
        if isinstance(target, ast.Name):
            name = target.id
            if kind is not None:
                scope.kinds[name] = kind
                if kind == _CUDAVER:
                    self._version_names.add(name)
            elif scope.module:
                scope.kinds.pop(name, None)
            else:
                scope.kinds[name] = ""  # hides a followed name of the module
            if name in self._aliases and not self._fallback_binding(target, value):
                if scope.module:
                    del self._aliases[name]
                else:
                    scope.shadowed.add(name)
            if scope.module and isinstance(value, ast.Constant) and isinstance(value.value, str):
                self._strings[name] = value.value
        elif isinstance(target, (ast.Tuple, ast.List)):
            # major, minor = torch.cuda.get_device_capability()
            for element in target.elts:
                inner = element.value if isinstance(element, ast.Starred) else element
                self._bind(inner, kind if kind == _CAP else None, None)

    def _fallback_binding(self, target: ast.expr, value: ast.expr | None) -> bool:
        """``torch = None`` or an assignment in ``except ImportError:`` — a stand-in for a
        missing module, not a new meaning of the name."""
        if isinstance(value, ast.Constant) and value.value is None:
            return True
        return any(isinstance(parent, ast.ExceptHandler) for _, parent in self._ancestors(target))

    def _assignment_rules(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Attribute):
            qual = self._qual(target)
            if qual in _TF32_SWITCHES and not _is_false(value):
                self._hit(TF32_FLAG, target, _tf32_message(qual))
            elif qual in _REDUCED_PRECISION_SWITCHES:
                self._hit(
                    TF32_FLAG,
                    target,
                    f"sets {qual}: AMD lists this switch as unsupported on ROCm, so the setting "
                    "is ignored",
                )
            elif qual == _CUDNN_BENCHMARK and not _is_false(value):
                self._hit(CUDNN_BENCHMARK, target, _BENCHMARK_MESSAGE)
        name = _target_name(target)
        if name is None:
            return
        if _WARP_SIZE_NAME_RE.match(name) and _is_int(value, 32):
            self._warp_size(value, f"{name} = 32")
        elif "warps" in name.lower() and _divides_by_32(value):
            self._warp_size(value, f"{name} = … / 32")

    def _warp_size(self, node: ast.AST, shown: str) -> None:
        self._hit(
            HARDCODED_WARP_SIZE,
            node,
            f"{shown} assumes 32-thread warps; AMD CDNA GPUs run 64-thread wavefronts",
        )

    def _binop(self, node: ast.BinOp) -> None:
        if not isinstance(node.op, ast.Mult):
            return
        for number, other in ((node.left, node.right), (node.right, node.left)):
            name = _target_name(other)
            if _is_int(number, 32) and name and "warps" in name.lower():
                self._warp_size(node, f"{name} * 32")
                return

    def _dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values, strict=True):
            name = _literal(key)
            if name and _WARP_SIZE_NAME_RE.match(name) and _is_int(value, 32):
                self._warp_size(value, f"{name!r}: 32")

    def _fstring(self, node: ast.JoinedStr) -> None:
        literal = "".join(_literal(part) or "" for part in node.values)
        if "sm_" not in literal and "compute_" not in literal:
            return
        if any(
            isinstance(part, ast.FormattedValue) and self._kind(part.value) == _CAP
            for part in node.values
        ) and not self._rocm_guarded(node):
            self._hit(
                DEVICE_CAPABILITY_GATE,
                node,
                "builds an NVIDIA architecture name (sm_XX) from the compute capability; "
                "on ROCm that gives a meaningless name from the gfx version",
            )

    # -- kernels in Python (GP210, GP211) ----------------------------------------------------

    def _cpp_extension(self, node: ast.Call, function: str) -> None:
        if function in ("CUDAExtension", "load"):
            sources = _argument(node, 1, "sources")
        elif function == "load_inline":
            cuda = _argument(node, 2, "cuda_sources")
            if cuda is None or (isinstance(cuda, ast.Constant) and cuda.value is None):
                return
            sources = None
        else:
            return
        files = _strings_in([sources]) if sources is not None else []
        kernels = [f for f in files if f.endswith((".cu", ".cuh"))]
        with_cuda = next((kw.value for kw in node.keywords if kw.arg == "with_cuda"), None)
        if function == "load" and not kernels and not (with_cuda and not _is_false(with_cuda)):
            return
        name = _literal(_argument(node, 0, "name")) or "…"
        if function == "load_inline":
            built = "inline CUDA sources (cuda_sources=…)"
        elif kernels:
            built = "the kernel files " + ", ".join(kernels)
        elif files:
            built = "sources " + ", ".join(files)
        else:
            built = "sources not written as a literal list"
        review = "review that code" if function == "load_inline" else "review those files (GP3xx)"
        message = (
            f"{function}({name!r}) builds {built}: on ROCm PyTorch hipifies them and compiles "
            f"with hipcc; {review}"
        )
        flags = self._nvcc_flags(node)
        severity = None
        if flags:
            severity = Severity.LOW
            message += (
                f"; the nvcc flags {', '.join(flags[:3])} target NVIDIA GPUs — ROCm builds take "
                "gfx targets from PYTORCH_ROCM_ARCH"
            )
        self._hit(CUDA_EXTENSION_BUILD, node, message, severity=severity)

    def _nvcc_flags(self, node: ast.Call) -> list[str]:
        flags: list[str] = []
        for kw in node.keywords:
            if kw.arg == "extra_compile_args" and isinstance(kw.value, ast.Dict):
                for key, value in zip(kw.value.keys, kw.value.values, strict=True):
                    if _literal(key) == "nvcc":
                        flags += _strings_in([value])
            elif kw.arg == "extra_cuda_cflags":
                flags += _strings_in([kw.value])
        return [f for f in flags if _NVIDIA_ARCH_FLAG_RE.search(f)]

    def _inline_asm(self, node: ast.Call) -> None:
        asm = _argument(node, 0, "asm")
        text = self._string_value(asm)
        if text is None:
            self._hit(
                INLINE_PTX,
                node,
                "inline_asm_elementwise with asm text gpuport cannot read; if it is PTX it will "
                "not compile on ROCm",
                severity=Severity.MEDIUM,
                confidence=Confidence.LOW,
            )
            return
        match = _PTX_RE.search(text)
        if match:
            self._hit(
                INLINE_PTX,
                node,
                f"inline_asm_elementwise with PTX ({match.group(0)!r}): Triton on ROCm cannot "
                "assemble NVIDIA PTX",
            )

    def _embedded_asm(self, node: ast.Constant, text: str) -> None:
        call = _ASM_CALL_RE.search(text)
        if call is None:
            return
        ptx = _PTX_RE.search(text, call.end())
        if ptx is None:
            return
        line = node.lineno + text.count("\n", 0, call.start())
        self._add(
            INLINE_PTX,
            line,
            0,
            f"CUDA source string with inline PTX ({ptx.group(0)!r}): hipcc and hiprtc cannot "
            "assemble PTX",
        )


def _tf32_message(switch: str) -> str:
    if "cudnn" in switch:  # convolutions: MIOpen on ROCm
        where = "convolutions run through MIOpen, which takes TF32 only in recent releases"
    else:
        where = "matmuls use TF32 (hipBLASLt XF32) only on MI300-class GPUs, with other numerics"
    return f"sets {switch}: on ROCm {where}; elsewhere the switch does nothing"


_BENCHMARK_MESSAGE = (
    "cudnn.benchmark on ROCm runs MIOpen's exhaustive search for every new shape: "
    "minutes on a cold cache"
)
_CUDNN_ONLY_MESSAGE = (
    "selects only the cuDNN attention backend: ROCm builds have none, so attention fails "
    "with 'No available kernel'"
)


def _no_fallback_message(what: str) -> str:
    return (
        f"attention pinned to {what} with no math fallback: on ROCm these kernels (AOTriton/CK) "
        "cover fewer GPUs and shapes, so calls can fail with 'No available kernel'"
    )


def _tool_message(tool: str, entry: kb.ToolCommand | None, runs: bool) -> str:
    head = f"runs {tool}" if runs else f"looks for {tool} on PATH"
    tail = f"; on ROCm use {entry.rocm_equivalent}" if entry else ""
    return f"{head}, which ROCm machines do not have{tail}"


def _tools_in(text: str, first_only: bool = False) -> list[tuple[str, kb.ToolCommand | None]]:
    """NVIDIA tools in command position in a command line (``watch -n1 nvidia-smi | …``)."""
    found: list[tuple[str, kb.ToolCommand | None]] = []
    segments = [text] if first_only else _SHELL_SEPARATORS.split(text)
    for segment in segments:
        words = segment.replace('"', " ").replace("'", " ").split()
        for word in words:
            if "=" in word and not word.startswith("-"):
                continue  # VAR=value before the command
            base = word.rsplit("/", 1)[-1]
            if base in _COMMAND_WRAPPERS or word.startswith("-") or word.isdigit():
                continue
            entry = kb.find_command(base)
            if entry is not None and (base in entry.rocm_commands or _ROCM_TOOL_RE.match(base)):
                entry = None  # an AMD tool (hipify-perl…) that the table mentions
            nvidia = entry is not None or base in _NVIDIA_TOOLS
            if nvidia and base not in (f[0] for f in found):
                found.append((base, entry))
            break
    return found


def _parsing_call(call: ast.Call) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name in _PARSING_FUNCTIONS


def _rocm_early_exit(statement: ast.stmt) -> bool:
    """``if torch.version.hip: return …`` — the code after it never runs on ROCm."""
    return (
        isinstance(statement, ast.If)
        and _mentions_rocm(statement.test)
        and bool(statement.body)
        and isinstance(statement.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))
    )


def _shell_script(words: list[str]) -> str | None:
    """The script of ``["bash", "-c", script]`` (also ``sh -lc``), else None."""
    if not words or words[0].rsplit("/", 1)[-1] not in ("bash", "sh", "zsh", "dash"):
        return None
    for position, word in enumerate(words[1:-1], start=1):
        if word.startswith("-") and "c" in word[1:] and not word.startswith("--"):
            return words[position + 1]
    return None


@functools.lru_cache(maxsize=8192)
def _rocm_identifier(ident: str) -> bool:
    return any(part.lower() in _ROCM_IDENTIFIER_PARTS for part in _IDENTIFIER_SPLIT.split(ident))


def _mentions_rocm(node: ast.AST) -> bool:
    # Every node under ``node`` in any order (ctx/op leaves hold no names): ast.walk's
    # generators are the slow part of this test, which guards run often.
    pending = [node]
    while pending:
        sub = pending.pop()
        kind = type(sub)
        if kind is ast.Name:
            if _rocm_identifier(sub.id):  # type: ignore[attr-defined]
                return True
        elif kind is ast.Attribute:
            if _rocm_identifier(sub.attr):  # type: ignore[attr-defined]
                return True
        elif kind is ast.Constant:
            value = sub.value  # type: ignore[attr-defined]
            if isinstance(value, str) and (
                _ROCM_WORD_RE.search(value) or _AMD_NAME_RE.search(value)
            ):
                return True
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = tuple(
                f for f in sub._fields if f not in ("ctx", "op", "ops")
            )
        for name in fields:
            value = getattr(sub, name, None)
            if type(value) is list:
                pending.extend(item for item in value if isinstance(item, ast.AST))
            elif isinstance(value, ast.AST):
                pending.append(value)
    return False


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if position < len(call.args) and not any(
        isinstance(a, ast.Starred) for a in call.args[: position + 1]
    ):
        return call.args[position]
    return None


def _literal(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _strings_in(nodes: Iterable[ast.AST | None]) -> list[str]:
    """The string constants in expressions, looking into lists, tuples and sets."""
    found: list[str] = []
    pending = [n for n in nodes if n is not None]
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            pending.extend(node.elts)
    return found


def _is_int(node: ast.AST | None, number: int) -> bool:
    return (
        isinstance(node, ast.Constant)
        and type(node.value) is int  # not bool
        and node.value == number
    )


def _is_false(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _number_like(node: ast.AST) -> bool:
    """A number, a negative number, or a tuple/list/set of those (``(8, 0)``, ``[(8, 0)]``)."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _number_like(node.operand)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_number_like(e) for e in node.elts)
    return False


def _target_name(node: ast.AST) -> str | None:
    """The last name of a target or operand: ``x``, ``self.x``, ``cfg['x']``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _literal(node.slice)
    return None


def _divides_by_32(node: ast.AST) -> bool:
    """``threads // 32``, ``threads / 32``, ``triton.cdiv(threads, 32)``."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Div)):
        return _is_int(node.right, 32)
    if isinstance(node, ast.Call) and len(node.args) == 2 and _is_int(node.args[1], 32):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        return name == "cdiv"
    return False


def _backend_names(node: ast.AST | None) -> set[str] | None:
    """``SDPBackend.X`` or a list of them -> {"X", …}; None when not written out."""
    if node is None:
        return None
    elements = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else [node]
    names: set[str] = set()
    for element in elements:
        if not isinstance(element, ast.Attribute):
            return None
        names.add(element.attr)
    return names
