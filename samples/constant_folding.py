"""Constant arithmetic computed at compile time: ``a * b + sin(a)`` of constants.

``constant_arithmetic`` (3-element constants) needs no kernel at all: the result is one
literal, ``{4.84147072, 10.909297, 18.1411209}`` (TF 2.21, CPU), and the compiled function
only copies it to its output. In TF 2.21 this folding happens in TensorFlow's own graph
constant folding, before XLA: the pre-optimization HLO already holds the literal, and the
multiply, sine and add survive only as TF ops (``tf_ops`` and ``source_map`` in capture.json).

``constant_arithmetic_xla`` makes XLA do the folding (see its docstring)::

    hloviz stats samples/constant_folding.py:constant_arithmetic
    hloviz stats samples/constant_folding.py:constant_arithmetic_xla
"""

import tensorflow as tf


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
