"""The walk over a Dockerfile's instructions: FROM images, ENV variables and RUN commands."""

from __future__ import annotations

import re

from gpuport.scan.containers.commands import command_hits
from gpuport.scan.containers.common import ContainerContext, is_nvidia_toolkit_variable
from gpuport.scan.containers.env import NVIDIA_CONTAINER_ENV, DockerfileEnv, nvidia_container_env
from gpuport.scan.containers.images import CUDA_CONTAINER_IMAGE, ImageRef, cuda_container_image
from gpuport.syntax.dockerfile import (
    dockerfile_instructions,
    env_pairs,
    expand_arguments,
    from_line,
    global_arguments,
    instruction_words,
)

_WHOLE_VARIABLE_RE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


def dockerfile_hits(ctx: ContainerContext) -> None:
    """Every container and build rule's hits in the Dockerfile ``ctx.text``."""
    text, run = ctx.text, ctx.run
    images, env = run.runs(CUDA_CONTAINER_IMAGE), run.runs(NVIDIA_CONTAINER_ENV)
    instructions = dockerfile_instructions(text)
    arguments = global_arguments(text, instructions)
    values = {name: argument.value for name, argument in arguments.items()}
    stages: set[str] = set()
    for instruction in instructions:
        keyword = instruction.keyword
        if keyword == "FROM":
            line = from_line(text, instruction)
            if line is None:
                continue
            if line.stage is not None:
                stages.add(line.stage)
            image = line.image
            resolved = expand_arguments(image.text, values)
            ctx.rocm_base = "rocm" in resolved.lower()  # rocm/pytorch, rocm/dev-ubuntu-24.04
            if resolved.lower() in stages or not images:  # a stage built earlier in the file
                continue
            edit_span, where = (image.start, image.end), ""
            whole = _WHOLE_VARIABLE_RE.fullmatch(image.text)
            if whole and whole.group(1) in arguments:  # FROM ${BASE}: edit the ARG's default
                edit_span = arguments[whole.group(1)].span
                where = f"from ARG {whole.group(1)}"
            elif resolved != image.text:
                where = "with ARG values filled in"
            site = ImageRef(image.start, image.end, resolved, edit_span, where)
            cuda_container_image(ctx, site)
        elif keyword == "ENV":
            pairs = env_pairs(text, instruction)
            removable = [
                p
                for p in pairs
                if is_nvidia_toolkit_variable(p.name) and p.name != "NVIDIA_VISIBLE_DEVICES"
            ]
            alone = len(removable) == len(pairs)  # the instruction goes as a whole
            for pair in pairs:
                if is_nvidia_toolkit_variable(pair.name):
                    if env:
                        nvidia_container_env(ctx, DockerfileEnv(instruction, pair, alone))
                    continue
                ctx.build.env_setting(pair.name, pair.name_span, pair.value_span)
        elif keyword == "RUN":
            commands = instruction_words(text, instruction)
            command_hits(ctx, commands, docker=False)
            ctx.build.commands(commands)
