"""The prompts ``bench serve`` and ``verify serve`` send: made here from a seed, or read from a
user's JSONL file.

Made prompts are words drawn from a fixed list, so the same seed gives the same prompts on any
machine without downloading a tokenizer. Their input length is therefore in **words**, not
tokens: English-like words come to roughly 1.3 tokens each with the BPE tokenizers of current
models, so a 100-word prompt is some 130 tokens (the server's ``usage`` gives the exact count).
The output length is exact: it is the request's ``max_tokens``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

# Longest file of prompts read (a JSONL of prompts is kilobytes to a few megabytes).
MAX_PROMPT_FILE_BYTES = 256 * 1024 * 1024
MAX_LENGTH = 1_000_000

# Plain words with no markup in them, so made prompts read as text to any tokenizer.
_WORD_LIST = (
    "the of and to in is that for it as with was on be by at this are from or an have not "
    "which but one all they were her she there been if more when will would who so no time "
    "about up out into than them can only other new some could these two may first then do "
    "any like my now over such our man me even most made after also did many before must "
    "through back years where much your way well down should because each just those people "
    "how too little state good very make world still own see men work long get here between "
    "both life being under never day same another know while last might us great old year off "
    "come since against go came right used take three system model memory kernel tensor layer "
    "matrix token server request batch cache device driver compute graph stream queue vector"
)
_WORDS = tuple(_WORD_LIST.split())


class PromptError(ValueError):
    """A prompt file or a length setting that cannot be used: the message names where."""


@dataclass(frozen=True, slots=True)
class Prompt:
    text: str
    max_tokens: int
    words: int  # the prompt's length in words


@dataclass(frozen=True, slots=True)
class LengthDistribution:
    """How long prompts or answers are: ``N`` (fixed), ``A-B`` (uniform), ``M~S`` (normal).

    A normal draw is rounded and kept at 1 or more.
    """

    kind: str  # "fixed", "uniform" or "normal"
    a: float
    b: float = 0.0

    @classmethod
    def parse(cls, text: str, what: str) -> LengthDistribution:
        spec = text.strip()
        try:
            if "~" in spec:
                mean, _, sd = spec.partition("~")
                dist = cls("normal", float(mean), float(sd))
                ok = 1 <= dist.a <= MAX_LENGTH and 0 <= dist.b <= MAX_LENGTH
            elif "-" in spec:
                low, _, high = spec.partition("-")
                dist = cls("uniform", int(low), int(high))
                ok = 1 <= dist.a <= dist.b <= MAX_LENGTH
            else:
                dist = cls("fixed", int(spec))
                ok = 1 <= dist.a <= MAX_LENGTH
        except ValueError:
            ok = False
        if not ok:
            raise PromptError(
                f"{what} {text!r}: give N, A-B (uniform) or M~S (normal), "
                f"each between 1 and {MAX_LENGTH:,}"
            )
        return dist

    def draw(self, rng: random.Random) -> int:
        if self.kind == "fixed":
            return int(self.a)
        if self.kind == "uniform":
            return rng.randint(int(self.a), int(self.b))
        return max(1, round(rng.gauss(self.a, self.b)))

    def describe(self) -> str:
        if self.kind == "fixed":
            return f"{int(self.a)}"
        if self.kind == "uniform":
            return f"{int(self.a)}-{int(self.b)} (uniform)"
        return f"{self.a:g}~{self.b:g} (normal)"


def synthetic_prompts(
    count: int, input_len: LengthDistribution, output_len: LengthDistribution, seed: int
) -> list[Prompt]:
    """``count`` prompts of words, the same for the same arguments on every machine.

    Each prompt starts with its number, so no two share a prefix a server could cache.
    """
    rng = random.Random(seed)
    prompts = []
    for index in range(count):
        words = input_len.draw(rng)
        body = [f"{index}:"] + [rng.choice(_WORDS) for _ in range(words - 1)]
        prompts.append(Prompt(" ".join(body), output_len.draw(rng), words))
    return prompts


def load_prompts(path: Path, default_max_tokens: LengthDistribution, seed: int) -> list[Prompt]:
    """Prompts from a JSONL file: one object per line, ``{"prompt": "...", "max_tokens": 64}``.

    ``max_tokens`` is optional (drawn from ``default_max_tokens`` where left out); blank lines
    are skipped, other fields ignored. A line that is not such an object is a :class:`PromptError` naming it.
    """
    size = path.stat().st_size
    if size > MAX_PROMPT_FILE_BYTES:
        raise PromptError(f"{path}: {size:,} bytes, more than a prompt file may hold")
    rng = random.Random(seed)
    prompts = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            where = f"{path}:{number}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise PromptError(f"{where}: not UTF-8 text") from None
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as exc:
                raise PromptError(f"{where}: not JSON ({exc.args[0]})") from None
            if not isinstance(item, dict):
                raise PromptError(f'{where}: expected an object like {{"prompt": "..."}}')
            text = item.get("prompt")
            if not isinstance(text, str) or not text:
                raise PromptError(f'{where}: "prompt" must be a non-empty string')
            max_tokens = item.get("max_tokens")
            if max_tokens is None:
                max_tokens = default_max_tokens.draw(rng)
            elif (
                not isinstance(max_tokens, int)
                or isinstance(max_tokens, bool)
                or not 1 <= max_tokens <= MAX_LENGTH
            ):
                raise PromptError(f'{where}: "max_tokens" must be a whole number from 1')
            prompts.append(Prompt(text, max_tokens, len(text.split())))
    if not prompts:
        raise PromptError(f"{path}: no prompts in it")
    return prompts
