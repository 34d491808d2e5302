"""The second seed example: matmul → + sin → relu → reduce_sum on 8192×8192 float32.

Two copies of the same function: ``matmul_chain`` with ``jit_compile=True`` and
``matmul_chain_no_jit`` without. Without XLA, TensorFlow runs every op as its own kernel
(MatMul, Sin, AddV2, Relu, Sum: five kernels, each reading and writing a 256 MiB tensor).
hloviz compiles the second one with ``tf.function(jit_compile=True)`` too (and says so), so the
two captures show what XLA makes of the same ops; ``capture.json`` records ``jit_compile`` and
the TF ops the graph holds (``tf_ops``).

With XLA (TF 2.21, CPU): the matmul stays a ``dot`` of its own; ``+ sin`` and ``relu`` fuse
into one loop fusion; the reduction is a fusion of its own.

    hloviz stats samples/matmul_chain.py:matmul_chain
    hloviz stats samples/matmul_chain.py:matmul_chain_no_jit
"""

import tensorflow as tf

N = 8192

HLOVIZ_ARGS = {
    "matmul_chain": [f"f32[{N},{N}]", f"f32[{N},{N}]"],
    "matmul_chain_no_jit": [f"f32[{N},{N}]", f"f32[{N},{N}]"],
}


@tf.function(jit_compile=True)
def matmul_chain(a, b):
    x = tf.matmul(a, b)
    x = x + tf.sin(x)
    x = tf.nn.relu(x)
    return tf.reduce_sum(x)


@tf.function
def matmul_chain_no_jit(a, b):
    x = tf.matmul(a, b)
    x = x + tf.sin(x)
    x = tf.nn.relu(x)
    return tf.reduce_sum(x)
