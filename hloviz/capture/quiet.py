"""Silence TensorFlow's and JAX's log noise unless the user asked for ``--verbose``.

TensorFlow's C++ logging reads ``TF_CPP_MIN_LOG_LEVEL`` once, when it is first imported, and
the model file usually imports it — so :func:`before_import` must run before the user's module
is imported. A value the user set in the environment is respected.
"""

from __future__ import annotations

import logging
import os
import warnings


def before_import(verbose: bool) -> None:
    """Set the environment the frameworks read at import time."""
    if verbose:
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # C++: errors only... and not even those
    os.environ.setdefault("TF_CPP_MIN_VLOG_LEVEL", "0")
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    os.environ.setdefault("GLOG_minloglevel", "3")


def after_import(verbose: bool) -> None:
    """Quiet the Python-side loggers (absl, tensorflow, jax) and framework warnings."""
    if verbose:
        return
    for name in ("tensorflow", "tf_keras", "keras", "jax", "jax._src", "absl", "h5py"):
        logging.getLogger(name).setLevel(logging.ERROR)
    try:  # absl logging is what TF's Python side writes through
        from absl import logging as absl_logging  # type: ignore[import-not-found]

        absl_logging.set_verbosity(absl_logging.ERROR)
    except ImportError:
        pass
    for module in ("tensorflow", "keras", "tf_keras", "jax", "absl", "numpy"):
        warnings.filterwarnings("ignore", module=module)
