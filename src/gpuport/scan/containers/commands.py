"""Container rules in shell commands: pip CUDA wheels, CUDA system packages, docker GPU flags.

:func:`command_hits` walks the commands of a script, a Dockerfile RUN line or a CI step and hands
each to the rules (GP403-GP405, and GP401/GP402 for the images and variables of docker
commands).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from gpuport import kb
from gpuport.edits import ChangeStatus, Hit, TextEdit
from gpuport.findings import Category, Confidence, Severity
from gpuport.kb import build_tools
from gpuport.rules import rule
from gpuport.scan.build import delete_span
from gpuport.scan.containers.common import (
    AMD_TOOLKIT_DOC,
    ROCM_DOCKER_DOC,
    ContainerContext,
    is_nvidia_toolkit_variable,
    rocm_docker_flags,
)
from gpuport.scan.containers.env import NVIDIA_CONTAINER_ENV, EnvOption, nvidia_container_env
from gpuport.scan.containers.images import CUDA_CONTAINER_IMAGE, ImageRef, cuda_container_image
from gpuport.scan.containers.pip_builds import PIP_BUILD_ISOLATION, pip_build_isolation
from gpuport.syntax.shell import Word, program_index

# ---------------------------------------------------------------------------------------------
# GP403

_LOCAL_CUDA_VERSION_RE = re.compile(r"\+cu\d{2,3}\b")
_REQUIREMENT_RE = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[(?P<extras>[^\]]*)\])?(?P<rest>.*)$"
)
# pip's options that take a value (https://pip.pypa.io/en/stable/cli/pip_install/).
_PIP_VALUE_OPTIONS = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-e",
        "--editable",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--src",
        "--upgrade-strategy",
        "--progress-bar",
        "--cache-dir",
        "--log",
        "--proxy",
        "--retries",
        "--timeout",
        "--trusted-host",
        "--cert",
        "--client-cert",
        "--no-binary",
        "--only-binary",
        "--config-settings",
        "-C",
        "--global-option",
    }
)
_PIP_INDEX_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--index"}
)

PIP_CUDA_WHEELS = rule(
    id="GP403",
    slug="pip-cuda-wheels",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="pip installs CUDA builds of GPU packages",
    what=(
        "Finds `pip install` commands (Dockerfile `RUN`, scripts, CI steps) that use a CUDA "
        "wheel index (`--index-url https://download.pytorch.org/whl/cu121`), pin CUDA local "
        "versions (`torch==2.3.0+cu121`), or install packages such as torch from PyPI, whose "
        "Linux wheels are CUDA builds."
    ),
    why=(
        "A CUDA build of PyTorch installs fine on an AMD machine but sees no GPU "
        "(`torch.cuda.is_available()` is False). ROCm builds come from their own index "
        "(`https://download.pytorch.org/whl/rocm6.4`)."
    ),
    example="RUN pip install torch==2.3.0+cu121 --index-url https://download.pytorch.org/whl/cu121",
    instead="RUN pip install torch==2.3.0 --index-url https://download.pytorch.org/whl/rocm6.4",
    fix="Install from the ROCm index of the knowledge base; drop `+cuXXX` version suffixes.",
    mechanical=True,
    references=(
        "https://pytorch.org/get-started/locally/",
        "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.0/how-to/3rd-party/pytorch-install.html",
    ),
    # pip, pip3, python -m pip, uv pip: every hit is in a pip command.
    needles=("pip",),
)


def pip_cuda_wheels(ctx: ContainerContext, args: Sequence[Word]) -> None:
    """GP403 for the arguments of one ``pip install`` (``download``, ``wheel``): CUDA indexes,
    ``+cuXXX`` pins, CUDA extras, and packages whose PyPI build is CUDA's."""

    def index_hit(url_word: Word) -> Hit | None:
        entry = kb.find_pip_index(url_word.text)
        if entry is None:
            return None
        replacement = entry.index_for(ctx.rocm_version)
        message = f"{url_word.text} serves CUDA wheels"
        if replacement is None:
            return Hit(
                PIP_CUDA_WHEELS,
                url_word.start,
                url_word.end,
                message,
                "pip-index",
                ChangeStatus.UNCONVERTED,
                note=entry.notes or "no ROCm index replaces this one",
            )
        return Hit(
            PIP_CUDA_WHEELS,
            url_word.start,
            url_word.end,
            f"{message}; ROCm's index is {replacement}",
            "pip-index",
            ChangeStatus.CONVERTED,
            (TextEdit(url_word.start, url_word.end, replacement),),
            note=entry.notes,
            fix=f"Use {replacement}.",
        )

    if not args or args[0].text not in ("install", "download", "wheel"):
        return
    text, rocm_version = ctx.text, ctx.rocm_version
    hits = ctx.run.hits
    has_rocm_index = other_torch_index = False
    requirements: list[Word] = []
    i = 1
    while i < len(args):
        word = args[i]
        option, sep, inline = word.text.partition("=")
        if option in _PIP_INDEX_OPTIONS:
            if sep:
                url_word = Word(inline, word.end - len(inline), word.end)
                i += 1
            elif i + 1 < len(args):
                url_word = args[i + 1]
                i += 2
            else:
                break
            hit = index_hit(url_word)
            if hit is not None:
                hits.append(hit)
                has_rocm_index |= hit.status is not ChangeStatus.UNCONVERTED
            elif "rocm" in url_word.text:
                has_rocm_index = True
            elif "download.pytorch.org" in url_word.text:
                # PyTorch's CPU index, or one a CI matrix fills in (whl/${{ matrix.cuda }}):
                # torch does not come "from PyPI" here.
                other_torch_index = True
            continue
        if word.text.startswith("-"):
            i += 2 if (word.text in _PIP_VALUE_OPTIONS and not sep) else 1
            continue
        requirements.append(word)
        i += 1
    needs_index: Word | None = None
    index_url = ""
    for word in requirements:
        match = _REQUIREMENT_RE.match(word.text)
        if not match:
            continue
        local = _LOCAL_CUDA_VERSION_RE.search(word.text)
        if local:
            raw = text[word.start : word.end]
            raw_local = _LOCAL_CUDA_VERSION_RE.search(raw)
            if raw_local is not None:
                start = word.start + raw_local.start()
                hits.append(
                    Hit(
                        PIP_CUDA_WHEELS,
                        word.start,
                        word.end,
                        f"{word.text} pins a CUDA build ({local.group(0)})",
                        "pip-index",
                        ChangeStatus.NEEDS_REVIEW,
                        (TextEdit(start, word.start + raw_local.end(), ""),),
                        note="the ROCm index must carry this version (its builds are +rocmX.Y)",
                        fix="Drop the +cuXXX suffix and install from the ROCm index.",
                    )
                )
        package = kb.find_package(match.group("name"))
        if package is None:
            continue
        extras = {e.strip().lower() for e in (match.group("extras") or "").split(",") if e}
        cuda_extras = extras & {e.lower() for e in package.cuda_extras}
        if cuda_extras:
            hits.append(
                Hit(
                    PIP_CUDA_WHEELS,
                    word.start,
                    word.end,
                    f"{word.text} asks for the CUDA extra {', '.join(sorted(cuda_extras))}",
                    "pip-package",
                    ChangeStatus.UNCONVERTED,
                    note=package.instead,
                    fix=package.instead,
                )
            )
        elif package.status is kb.PackageStatus.NEEDS_ROCM_BUILD and package.rocm_index:
            if needs_index is None and not has_rocm_index:
                needs_index = word
                index_url = package.index_for(rocm_version) or ""
        elif package.rocm_package and package.status in (
            kb.PackageStatus.NOT_SUPPORTED,
            kb.PackageStatus.NEEDS_ROCM_BUILD,
            kb.PackageStatus.NOT_APPLICABLE,
        ):
            name_start = word.start + text[word.start : word.end].find(match.group("name"))
            hits.append(
                Hit(
                    PIP_CUDA_WHEELS,
                    word.start,
                    word.end,
                    f"{match.group('name')} is a CUDA build; ROCm's is {package.rocm_package}",
                    "pip-package",
                    ChangeStatus.NEEDS_REVIEW,
                    (
                        TextEdit(
                            name_start, name_start + len(match.group("name")), package.rocm_package
                        ),
                    ),
                    note=package.notes or package.instead,
                    fix=f"Install {package.rocm_package}.",
                )
            )
        elif package.status in (kb.PackageStatus.NOT_SUPPORTED, kb.PackageStatus.NOT_APPLICABLE):
            hits.append(
                Hit(
                    PIP_CUDA_WHEELS,
                    word.start,
                    word.end,
                    f"{match.group('name')} is CUDA-only ({package.status.value})",
                    "pip-package",
                    ChangeStatus.UNCONVERTED,
                    note=package.instead,
                    fix=package.instead,
                )
            )
    if needs_index is not None and index_url and not other_torch_index:
        install = args[0]
        hits.append(
            Hit(
                PIP_CUDA_WHEELS,
                needs_index.start,
                needs_index.end,
                f"{needs_index.text} from PyPI is a CUDA build on Linux; use the ROCm index",
                "pip-index",
                ChangeStatus.NEEDS_REVIEW,
                (TextEdit(install.end, install.end, f" --index-url {index_url}"),),
                note="all packages of this command now come from the ROCm index; "
                "split the command if some are not there",
                fix=f"Add --index-url {index_url}.",
                after=f"--index-url {index_url} {needs_index.text}",
            )
        )


# ---------------------------------------------------------------------------------------------
# GP404

# NVIDIA's packages, repository and conda channels (kb/build_tools.toml); a version may follow
# a package's name in each manager's syntax (apt: pkg=1.2, conda: pkg>=1.2 or "pkg 1.2").
_NVIDIA_REPO_RE = re.compile(build_tools.alternatives(build_tools.package_repositories()))
_APT_PACKAGES = [p for p in build_tools.system_packages() if p.kind == "apt"]
_CONDA_PACKAGES = [p for p in build_tools.system_packages() if p.kind == "conda"]
_CUDA_APT_PACKAGE_RE = re.compile(
    "^" + build_tools.alternatives(_APT_PACKAGES) + r"(?:[=:][\w.:~+*-]+)?$"
)
_CUDA_CONDA_PACKAGE_RE = re.compile(
    "^" + build_tools.alternatives(_CONDA_PACKAGES) + r"(?:[=<>!~ ][^\s]*)?$"
)
_NVIDIA_CHANNELS = frozenset(p.name for p in build_tools.conda_channels())
_SYSTEM_PACKAGE_MANAGERS = frozenset({"apt-get", "apt", "yum", "dnf", "microdnf", "zypper"})
_CONDA_PACKAGE_MANAGERS = frozenset({"conda", "mamba", "micromamba"})


class PackageCommand(NamedTuple):
    """One command: all its words, the program's name and the words after it."""

    words: Sequence[Word]
    program: str
    args: Sequence[Word]


CUDA_SYSTEM_PACKAGES = rule(
    id="GP404",
    slug="cuda-system-packages",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="The system package manager installs CUDA or NVIDIA packages",
    what=(
        "Finds `apt-get`/`yum`/`dnf` installs of `cuda-*`, `nvidia-*`, `libcudnn*`, "
        "`libnccl*`, TensorRT packages, conda installs of `cudatoolkit`/`pytorch-cuda`, and "
        "NVIDIA's CUDA package repository."
        " The scan tells a file's sites once, the first naming the other lines (one "
        "decision fixes them); `gpuport port` edits each."
    ),
    why=(
        "These packages are NVIDIA's toolkit and libraries; on ROCm they are dead weight at "
        "best, and the ROCm packages (`rocm-dev`, `hipblas-dev`, `miopen-hip-dev`...) come "
        "from AMD's repository or a ROCm base image."
    ),
    example="RUN apt-get install -y cuda-toolkit-12-1 libcudnn8",
    instead="FROM rocm/dev-ubuntu-22.04:6.4-complete  # ROCm libraries included",
    fix=(
        "Remove the CUDA packages; take ROCm from a rocm/* base image or install the ROCm "
        "packages that match what the project links."
    ),
    mechanical=False,
    references=(
        "https://rocm.docs.amd.com/projects/install-on-linux/en/docs-6.2.0/install/install-overview.html",
    ),
    # What every package, repository and channel name starts with.
    needles=tuple(
        sorted(
            {
                build_tools.literal_prefix(p.pattern)
                for p in (
                    *build_tools.system_packages(),
                    *build_tools.package_repositories(),
                    *build_tools.conda_channels(),
                )
            }
        )
    ),
)


def cuda_system_packages(ctx: ContainerContext, command: PackageCommand) -> None:
    """GP404: NVIDIA's package repository in any command; CUDA packages a manager installs."""
    for word in command.words:
        if _NVIDIA_REPO_RE.search(word.text):
            ctx.add(
                Hit(
                    CUDA_SYSTEM_PACKAGES,
                    word.start,
                    word.end,
                    "sets up NVIDIA's CUDA package repository",
                    "system-packages",
                    ChangeStatus.UNCONVERTED,
                    note="use AMD's ROCm repository or a rocm/* base image",
                )
            )
            break
    program, args = command.program, command.args
    if program in _SYSTEM_PACKAGE_MANAGERS:
        pattern = _CUDA_APT_PACKAGE_RE
    elif program in _CONDA_PACKAGE_MANAGERS:
        pattern = _CUDA_CONDA_PACKAGE_RE
    else:
        return
    if not args or args[0].text not in ("install", "create", "add"):
        return
    found = [w for w in args[1:] if not w.text.startswith("-") and pattern.match(w.text)]
    channel = [
        args[i + 1]
        for i in range(len(args) - 1)
        if args[i].text in ("-c", "--channel") and args[i + 1].text in _NVIDIA_CHANNELS
    ]
    if not found and not channel:
        return
    first = found[0] if found else channel[0]
    names = ", ".join(w.text for w in found) or "packages from the nvidia channel"
    ctx.add(
        Hit(
            CUDA_SYSTEM_PACKAGES,
            first.start,
            first.end,
            f"{program} installs CUDA/NVIDIA packages: {names}",
            "system-packages",
            ChangeStatus.UNCONVERTED,
            note="ROCm packages differ; take them from a rocm/* base image or AMD's repository",
        )
    )


# ---------------------------------------------------------------------------------------------
# GP405

# docker run's options that take a value (https://docs.docker.com/reference/cli/docker/container/run/).
_DOCKER_VALUE_OPTIONS = frozenset(
    {
        "-a", "--attach", "--add-host", "--blkio-weight", "--cap-add", "--cap-drop",
        "--cgroup-parent", "--cgroupns", "--cidfile", "--cpu-period", "--cpu-quota", "--cpu-shares",
        "-c", "--cpus", "--cpuset-cpus", "--cpuset-mems", "--device", "--device-cgroup-rule",
        "--dns", "--dns-option", "--dns-search", "--entrypoint", "-e", "--env", "--env-file",
        "--expose", "--gpus", "--group-add", "--health-cmd", "--health-interval",
        "--health-retries", "--health-timeout", "-h", "--hostname", "--ip", "--ip6", "--ipc",
        "--isolation", "-l", "--label", "--label-file", "--link", "--log-driver", "--log-opt",
        "--mac-address", "-m", "--memory", "--memory-reservation", "--memory-swap", "--mount",
        "--name", "--network", "--net", "--network-alias", "--pid", "--pids-limit", "--platform",
        "-p", "--publish", "--pull", "--restart", "--runtime", "--security-opt", "--shm-size",
        "--stop-signal", "--stop-timeout", "--storage-opt", "--sysctl", "--tmpfs", "-u", "--user",
        "--ulimit", "--userns", "--uts", "-v", "--volume", "--volume-driver", "--volumes-from",
        "-w", "--workdir",
    }
)  # fmt: skip


class DockerOption(NamedTuple):
    """One option of ``docker run``: its name, its value, and the span of both."""

    option: str
    value: str
    start: int
    end: int


class DockerCommand(NamedTuple):
    """A ``docker``/``podman``/``nvidia-docker`` command line, read up to its image."""

    program: Word
    name: str  # the program's name
    sub: Word | None  # run, create, pull, build... (after an optional `container`)
    pulled: Word | None  # the image of `docker pull`
    build_args: tuple[Word, ...]  # the NAME=value words after `docker build --build-arg`
    options: tuple[DockerOption, ...]  # the options of `docker run`/`create`
    image: Word | None  # the image of `docker run`/`create`


def read_docker_command(program: Word, name: str, args: Sequence[Word]) -> DockerCommand:
    """The parts of a docker command line that the rules look at."""
    args = list(args)
    if args and args[0].text == "container":
        args = args[1:]
    sub = args[0] if args else None
    pulled: Word | None = None
    build_args: list[Word] = []
    options: list[DockerOption] = []
    image: Word | None = None
    if sub is not None and sub.text == "pull" and len(args) > 1:
        pulled = next((w for w in args[1:] if not w.text.startswith("-")), None)
    elif sub is not None and sub.text == "build":
        for i, word in enumerate(args[:-1]):
            if word.text == "--build-arg" and "=" in args[i + 1].text:
                build_args.append(args[i + 1])
    elif sub is not None and sub.text in ("run", "create"):
        i = 1
        while i < len(args):
            word = args[i]
            option, sep, inline = word.text.partition("=")
            if not word.text.startswith("-"):
                image = word
                break
            value_word: Word | None = None
            if option in _DOCKER_VALUE_OPTIONS and not sep and i + 1 < len(args):
                value_word = args[i + 1]
            value = inline if sep else (value_word.text if value_word else "")
            end = value_word.end if value_word else word.end
            options.append(DockerOption(option, value, word.start, end))
            i += 2 if value_word else 1
    return DockerCommand(program, name, sub, pulled, tuple(build_args), tuple(options), image)


class ApptainerArgs(NamedTuple):
    """The words after ``apptainer``/``singularity``."""

    args: Sequence[Word]


DOCKER_GPU_FLAGS = rule(
    id="GP405",
    slug="docker-gpu-flags",
    category=Category.CONTAINERS,
    severity=Severity.MEDIUM,
    confidence=Confidence.HIGH,
    summary="A container is started with NVIDIA GPU flags",
    what=(
        "Finds `docker run --gpus`, `--runtime=nvidia`, `nvidia-docker run`, and Apptainer/"
        "Singularity `--nv` in shell scripts."
    ),
    why=(
        "`--gpus` needs the NVIDIA Container Toolkit (or, from Docker 29.3, AMD's CDI setup); "
        "without it Docker fails with `could not select device driver`. ROCm containers get "
        "the GPUs through `/dev/kfd` and `/dev/dri` and the video group."
    ),
    example="docker run --gpus all -it my-train-image",
    instead=(
        "docker run --device=/dev/kfd --device=/dev/dri --group-add video "
        "--security-opt seccomp=unconfined -it my-train-image"
    ),
    fix="Pass the ROCm devices and group instead (`apptainer --rocm` instead of `--nv`).",
    mechanical=True,
    references=(
        ROCM_DOCKER_DOC,
        AMD_TOOLKIT_DOC,
        "https://apptainer.org/docs/user/main/gpu.html",
    ),
    needles=("--gpus", "--runtime", "nvidia-docker", "--nv"),
)


def docker_gpu_flags(ctx: ContainerContext, site: DockerCommand | ApptainerArgs) -> None:
    """GP405: ``--gpus``, ``--runtime nvidia`` and nvidia-docker; Apptainer's ``--nv``."""
    text = ctx.text
    if isinstance(site, ApptainerArgs):
        for word in site.args:
            if word.text == "--nv":
                ctx.add(
                    Hit(
                        DOCKER_GPU_FLAGS,
                        word.start,
                        word.end,
                        "`--nv` gives an Apptainer container NVIDIA GPUs",
                        "docker-run",
                        ChangeStatus.CONVERTED,
                        (TextEdit(word.start, word.end, "--rocm"),),
                        fix="Use --rocm.",
                    )
                )
        return
    if site.sub is None or site.sub.text not in ("run", "create"):
        return
    gpu_options = [
        o
        for o in site.options
        if o.option == "--gpus" or (o.option == "--runtime" and o.value == "nvidia")
    ]
    flags = rocm_docker_flags()
    if site.name == "nvidia-docker":
        edits = [TextEdit(site.program.start, site.program.end, "docker")]
        if not gpu_options:
            edits.append(TextEdit(site.sub.end, site.sub.end, f" {flags}"))
        ctx.add(
            Hit(
                DOCKER_GPU_FLAGS,
                site.program.start,
                site.program.end,
                "nvidia-docker starts containers with the NVIDIA runtime",
                "docker-run",
                ChangeStatus.CONVERTED,
                tuple(edits),
                fix=f"Use docker run {flags}.",
            )
        )
    for position, option in enumerate(gpu_options):
        start, end = option.start, option.end
        edit = TextEdit(start, end, flags) if position == 0 else delete_span(text, start, end)
        ctx.add(
            Hit(
                DOCKER_GPU_FLAGS,
                start,
                end,
                f"`{text[start:end]}` asks Docker for NVIDIA GPUs",
                "docker-run",
                ChangeStatus.CONVERTED,
                (edit,),
                fix=f"Use {flags}.",
                after=flags if position == 0 else "",
            )
        )


# ---------------------------------------------------------------------------------------------
# The walk over commands

COMMAND_RULES = (PIP_CUDA_WHEELS, CUDA_SYSTEM_PACKAGES, DOCKER_GPU_FLAGS, PIP_BUILD_ISOLATION)


def command_hits(
    ctx: ContainerContext, commands: Iterable[Sequence[Word]], *, docker: bool = True
) -> None:
    """The container rules' hits in shell commands (``docker``: docker/apptainer commands too)."""
    run = ctx.run
    packages, pip = run.runs(CUDA_SYSTEM_PACKAGES), run.runs(PIP_CUDA_WHEELS)
    isolation = run.runs(PIP_BUILD_ISOLATION)
    flags, images, env = (
        run.runs(DOCKER_GPU_FLAGS),
        run.runs(CUDA_CONTAINER_IMAGE),
        run.runs(NVIDIA_CONTAINER_ENV),
    )
    for words in commands:
        index = program_index(words)
        if index is None:
            continue
        program = words[index].text.rsplit("/", 1)[-1]
        args = list(words[index + 1 :])
        if packages:
            cuda_system_packages(ctx, PackageCommand(words, program, args))
        if program in ("echo", "printf"):
            continue
        if re.fullmatch(r"pip\d*(?:\.\d+)?", program) or program == "uv":
            if program == "uv" and args and args[0].text == "pip":
                args = args[1:]
            if pip:
                pip_cuda_wheels(ctx, args)
            if isolation:
                pip_build_isolation(ctx, args, words[:index])
        elif re.fullmatch(r"python\d*(?:\.\d+)?", program):
            if len(args) >= 2 and args[0].text == "-m" and args[1].text == "pip":
                if pip:
                    pip_cuda_wheels(ctx, args[2:])
                if isolation:
                    pip_build_isolation(ctx, args[2:], words[:index])
        elif docker and program in ("docker", "podman", "nvidia-docker"):
            command = read_docker_command(words[index], program, args)
            if images and command.pulled is not None:
                pulled = command.pulled
                cuda_container_image(ctx, ImageRef(pulled.start, pulled.end, pulled.text))
            for argument in command.build_args if images else ():
                value = argument.text.split("=", 1)[1]
                offset = argument.end - len(value)
                cuda_container_image(ctx, ImageRef(offset, argument.end, value, where="build arg"))
            for option in command.options if env else ():
                name = option.value.split("=", 1)[0]
                if option.option in ("-e", "--env") and is_nvidia_toolkit_variable(name):
                    at = option.start + ctx.text[option.start : option.end].rfind(name)
                    site = EnvOption(name, option.start, option.end, (at, at + len(name)))
                    nvidia_container_env(ctx, site)
            if flags:
                docker_gpu_flags(ctx, command)
            if images and command.image is not None:
                image = command.image
                cuda_container_image(ctx, ImageRef(image.start, image.end, image.text))
        elif docker and program in ("apptainer", "singularity") and flags:
            docker_gpu_flags(ctx, ApptainerArgs(args))
