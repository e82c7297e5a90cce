"""Fast approximate activation used by the Triton MLP kernel."""

import triton
import triton.language as tl


@triton.jit
def fast_tanh(x):
    return tl.inline_asm_elementwise(
        asm="tanh.approx.f32 $0, $1;",
        constraints="=r,r",
        args=[x],
        dtype=tl.float32,
        is_pure=True,
        pack=1,
    )
