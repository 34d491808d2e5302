"""Constant arithmetic computed at compile time: ``a * b + sin(a)`` of constants.

``constant_arithmetic`` (3-element constants) needs no kernel at all: the result is one
literal, ``{4.84147072, 10.909297, 18.1411209}`` (TF 2.21, CPU), and the compiled function
only copies it to its output. In TF 2.21 this folding happens in TensorFlow's own graph
constant folding, before XLA: the pre-optimization HLO already holds the literal, and the
multiply, sine and add survive only as TF ops (``tf_ops`` and ``source_map`` in capture.json).

``constant_arithmetic_xla`` makes XLA do the folding (see its docstring), and
``folded_by_both`` has folds of each: TensorFlow's and XLA's (its capture is
``samples/captures/folded_by_both``)::

    hloviz stats samples/constant_folding.py:constant_arithmetic
    hloviz stats samples/constant_folding.py:constant_arithmetic_xla
    hloviz dump samples/constant_folding.py:folded_by_both -o samples/captures/folded_by_both
"""

import tensorflow as tf

#: Argument specs for hloviz (HLO shape syntax), by function name.
HLOVIZ_ARGS = {
    "folded_by_both": ["f32[16,256]"],
}


@tf.function(jit_compile=True)
def constant_arithmetic():
    """Takes no arguments, so hloviz needs no specs for it."""
    a = tf.constant([1.0, 2.0, 3.0])
    b = tf.constant([4.0, 5.0, 6.0])
    return a * b + tf.sin(a)


@tf.function(jit_compile=True)
def constant_arithmetic_xla():
    """The same arithmetic where XLA, not TensorFlow, does the folding.

    TensorFlow folds constants itself before handing the graph to XLA — but only results up
    to 10 MiB. These 2048×2048 float32 fills (16 MiB) pass through unfolded, so the
    pre-optimization HLO holds the multiply, sine and add; XLA's simplifier pushes them through
    the broadcast and folds them into one scalar literal, 1.5 * 2 + sin(1.5) = 3.99749494,
    which a single kernel broadcasts.
    """
    a = tf.fill([2048, 2048], 1.5)
    b = tf.fill([2048, 2048], 2.0)
    return a * b + tf.sin(a)


@tf.function(jit_compile=True)
def folded_by_both(x):
    """Folds by TensorFlow and by XLA in one function.

    ``3 * 2`` is constant: TensorFlow's bridge folds it into one literal (6) before XLA sees
    it. The means divide by the row length, 256: XLA turns the divisions into multiplications
    by constants it writes itself, 1/256 and 6/256 (the scale merged in), holding part of the
    means' work (which still runs in kernels).
    """
    scale = tf.constant(3.0) * tf.constant(2.0)
    centred = x - tf.reduce_mean(x, axis=1, keepdims=True)
    return tf.reduce_mean(centred * centred, axis=1) * scale
