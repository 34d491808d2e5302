"""Names for the backend kinds XLA writes (:attr:`hloviz.ir.Instruction.backend_kind`).

On GPU a ``kCustom`` fusion is not one thing: XLA's ``backend_config`` says whether it runs as a
Triton GEMM, a generic Triton kernel, a cuDNN graph or a hand-written custom fusion, and
custom-calls name the library they call (cuBLAS, cuDNN). Tables and pictures show the name a
GPU user knows; JSON keeps XLA's own string.
"""

from __future__ import annotations

#: XLA's kind strings → the name shown. Kinds not listed are shown as XLA wrote them.
NAMES: dict[str, str] = {
    "__triton_gemm": "Triton GEMM",
    "__triton_nested_gemm_fusion": "Triton GEMM",
    "__triton_scaled_dot_fusion": "Triton scaled dot",
    "__triton": "Triton",
    "__triton_collective_fusion": "Triton collective",
    "__cudnn$fusion": "cuDNN",
    "__custom_fusion": "custom fusion",
    "__dynamic_memcpy": "dynamic memcpy",
    "__ynn_fusion": "YNNPACK",
    "__cublas$gemm": "cuBLAS GEMM",
    "__cublas$lt$matmul": "cuBLASLt matmul",
    "__cublas$lt$matmul$f8": "cuBLASLt FP8 matmul",
    "__cublas$triangularSolve": "cuBLAS triangular solve",
    "__onednn$matmul": "oneDNN matmul",
    "__onednn$convolution": "oneDNN convolution",
}
#: Families by prefix, for the many cuDNN targets (convolutions, fused attention, norms).
_PREFIXES = (
    ("__cudnn$conv", "cuDNN convolution"),
    ("__cudnn$fmha", "cuDNN fused attention"),
    ("__cudnn$norm", "cuDNN norm"),
    ("__cudnn$", "cuDNN"),
    ("__cublas", "cuBLAS"),
    ("__onednn$", "oneDNN"),
    ("__triton", "Triton"),
)


def backend_name(kind: str | None) -> str | None:
    """The name to show for a backend kind (``__triton_gemm`` → ``Triton GEMM``); None for None."""
    if not kind:
        return None
    if kind in NAMES:
        return NAMES[kind]
    for prefix, name in _PREFIXES:
        if kind.startswith(prefix):
            return name
    return kind


def kind_text(kind: str, backend_kind: str | None, *, fusion: bool) -> str:
    """A kernel's kind as every text output writes it (stats, show, the verdict, diff):
    ``kLoop fusion``, ``kCustom fusion · YNNPACK``, ``dot``, ``custom-call · oneDNN matmul``.

    ``kind`` is the fusion kind (``kLoop``) or the opcode of an unfused kernel; ``backend_kind``
    XLA's string for how the backend runs it (:attr:`hloviz.ir.Instruction.backend_kind`).
    """
    text = f"{kind} fusion" if fusion and kind != "fusion" else kind
    backend = backend_name(backend_kind)
    return f"{text} · {backend}" if backend else text
