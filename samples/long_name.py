"""A TensorFlow function with a long name, for ``hloviz passes``: XLA leaves the module's name
out of any dump file name longer than 255 characters, so with the name TF gives the module when
the script runs by itself (``a_inference_<function>_18__XlaMustCompile_true_config_proto_…``)
the snapshots of passes with long names come as
``module_0000.0019.HLO_passes_after_layout_assignment.after_fusion….txt`` while the others keep
it. ``samples/captures/passes/long_name.tar.xz`` holds what XLA wrote (its ``.txt`` files less
the buffer assignment and memory report), made from the project root with::

    XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*" python samples/long_name.py
    hloviz passes DIR
"""

import tensorflow as tf

HLOVIZ_ARGS = {"normalise_sensor_readings_then_scale_and_shift_them_for_the_classifier_head": ["f32[8,16]", "f32[16,4]"]}


@tf.function(jit_compile=True)
def normalise_sensor_readings_then_scale_and_shift_them_for_the_classifier_head(x, w):
    """Centre a batch, project it and apply relu."""
    m = tf.reduce_mean(x, axis=0)
    return tf.nn.relu((x - m) @ w + 1.0)


if __name__ == "__main__":
    normalise_sensor_readings_then_scale_and_shift_them_for_the_classifier_head(tf.ones([8, 16]), tf.ones([16, 4]))
