"""One small CNN at two widths, for ``hloviz diff``: the convolution widened from 64 to 96
channels. The logits ``dot`` keeps its output shape (``f32[4,10]``) but contracts over 96
channels instead of 64, so it does 1.5× the work: a change ``diff`` must report.

    hloviz dump samples/widen.py:narrow -o samples/captures/widen_64
    hloviz dump samples/widen.py:wide -o samples/captures/widen_96
    hloviz diff samples/captures/widen_64 samples/captures/widen_96
"""

import jax
import jax.numpy as jnp

BATCH, SIZE, CLASSES = 4, 8, 10

HLOVIZ_ARGS = {
    "narrow": [f"f32[{BATCH},{SIZE},{SIZE},3]", "f32[3,3,3,64]", f"f32[64,{CLASSES}]"],
    "wide": [f"f32[{BATCH},{SIZE},{SIZE},3]", "f32[3,3,3,96]", f"f32[96,{CLASSES}]"],
}


def _net(images, kernel, dense):
    x = jax.lax.conv_general_dilated(images, kernel, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jnp.maximum(x, 0.0).mean(axis=(1, 2)) @ dense


def narrow(images, kernel, dense):
    """64 channels."""
    return _net(images, kernel, dense)


def wide(images, kernel, dense):
    """96 channels."""
    return _net(images, kernel, dense)
