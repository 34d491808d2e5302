"""Argument specs: HLO shape syntax and Python literals, with caret errors (no TF needed)."""

from __future__ import annotations

import pytest

from hloviz.capture.specs import (
    LiteralArg,
    TensorSpec,
    parse_arg_options,
    parse_convention,
    parse_spec,
)
from hloviz.errors import HloParseError, HlovizError


@pytest.mark.parametrize("text, etype, dims", [
    ("f32[100000000]", "f32", (100000000,)),
    ("s32[8,128]", "s32", (8, 128)),
    ("bf16[2,3]", "bf16", (2, 3)),
    ("pred[]", "pred", ()),
    ("f32[]", "f32", ()),
    (" u8[ 4 , 5 ] ", "u8", (4, 5)),
    ("f32[8,128]{1,0}", "f32", (8, 128)),  # a layout is accepted and ignored
    ("f8e4m3fn[16]", "f8e4m3fn", (16,)),
])
def test_tensor_specs(text, etype, dims):
    spec = parse_spec(text)
    assert spec == TensorSpec(etype, dims)
    assert str(spec) == f"{etype}[{','.join(map(str, dims))}]"


def test_a_huge_spec_is_only_a_description():
    spec = parse_spec("f32[100000000]")
    assert isinstance(spec, TensorSpec) and spec.element_count == 100_000_000


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("-2.5", -2.5), ("True", True), ("'relu'", "relu"), ("(1, 2)", (1, 2)),
    ("[1, 2]", [1, 2]), ("None", None), ("{'a': 1}", {"a": 1}),
])
def test_python_literals(text, value):
    spec = parse_spec(text)
    assert isinstance(spec, LiteralArg)
    assert spec.value == value


@pytest.mark.parametrize("text, column, fragment", [
    ("f32[4", 6, "expected ']'"),
    ("f33[2]", 1, "unknown element type 'f33'"),
    ("float32[3]", 1, "HLO writes it as 'f32'"),
    ("f32[2,x]", 7, "got 'x'"),
    ("f32[2, -1]", 8, "got '-1'"),
    ("f32[?]", 5, "dynamic dimensions"),
    ("f32[<=4]", 5, "dynamic dimensions"),
    ("f32[4] junk", 8, "unexpected text after the shape: 'junk'"),
    ("relu", 1, "nor a Python literal"),
])
def test_spec_errors_point_at_the_mistake(text, column, fragment):
    with pytest.raises(HloParseError) as info:
        parse_spec(text, where="--arg 2")
    err = info.value
    assert isinstance(err, HlovizError)
    assert (err.line, err.column) == (1, column)
    assert fragment in err.reason
    lines = str(err).splitlines()
    assert lines[0].startswith(f"--arg 2:1:{column}: error: ")
    assert lines[1] == text
    assert lines[2] == " " * (column - 1) + "^"


def test_arg_options_positional_and_keyword():
    specs = parse_arg_options(["f32[8]", "delta=f32[]", "k=3"])
    assert specs.positional == (TensorSpec("f32", (8,)),)
    assert dict(specs.keyword) == {"delta": TensorSpec("f32", ()), "k": LiteralArg(3, "3")}
    assert specs.source == "--arg"
    assert specs.describe() == ["f32[8]", "delta=f32[]", "k=3"]


def test_positional_after_keyword_is_an_error():
    with pytest.raises(HloParseError, match="positional spec cannot follow"):
        parse_arg_options(["x=f32[8]", "f32[]"])


def test_arg_errors_name_the_option():
    with pytest.raises(HloParseError) as info:
        parse_arg_options(["f32[8]", "f32[8"])
    assert info.value.filename == "--arg 2"


def test_convention_entries():
    specs = parse_convention(["f32[8,128]", 2, "'relu'"], where="m.py: HLOVIZ_ARGS['f']")
    assert specs.positional == (TensorSpec("f32", (8, 128)), LiteralArg(2, "2"), LiteralArg("relu", "'relu'"))
    assert specs.source == "HLOVIZ_ARGS"
    kw = parse_convention({"x": "f32[4]", "k": 3}, where="w")
    assert dict(kw.keyword) == {"x": TensorSpec("f32", (4,)), "k": LiteralArg(3, "3")}


def test_convention_errors_say_where():
    with pytest.raises(HloParseError) as info:
        parse_convention(["f32[8]", "f32[x]"], where="m.py: HLOVIZ_ARGS['f']")
    assert info.value.filename == "m.py: HLOVIZ_ARGS['f'][1]"
    with pytest.raises(HlovizError, match="must be a list of specs"):
        parse_convention(42, where="m.py: HLOVIZ_ARGS['f']")


def test_convention_entries_may_be_example_arrays_and_optimizer_states():
    # A user writes HLOVIZ_ARGS with the arrays their step takes (``jnp.zeros``, a model's
    # ``init`` output, optax's state: named tuples, ``EmptyState()`` among them); each array
    # was passed as a static Python value ("Non-hashable static arguments are not supported").
    # Oracle: numpy's own shapes and dtypes of the arrays given.
    from collections import namedtuple

    np = pytest.importorskip("numpy")
    Adam = namedtuple("Adam", ["count", "mu", "nu"])  # noqa: PYI024 (optax's states are such tuples)
    Empty = namedtuple("Empty", [])  # noqa: PYI024
    params = {"dense": {"kernel": np.zeros((3, 4), np.float32), "bias": np.zeros((4,), np.float32)}}
    state = (Empty(), Adam(np.zeros((), np.int32), params, params))
    x, key = np.ones((2, 3), np.float16), np.zeros((2,), np.uint32)
    specs = parse_convention([params, state, x, key, 0.5], where="HLOVIZ_ARGS['step']")
    p, s, xs, ks, lit = specs.positional
    assert xs == TensorSpec("f16", x.shape) and ks == TensorSpec("u32", key.shape)
    assert lit == LiteralArg(0.5, "0.5")
    assert dict(p.leaves()) == {"['dense']['kernel']": TensorSpec("f32", (3, 4)),
                                "['dense']['bias']": TensorSpec("f32", (4,))}
    rebuilt = s.map(lambda spec: spec)
    assert type(rebuilt[0]) is Empty and type(rebuilt[1]) is Adam  # the state's own types
    assert rebuilt[1].count == TensorSpec("s32", ()) and rebuilt[1].mu["dense"]["bias"] == TensorSpec("f32", (4,))
    assert len(s.leaves()) == 5


def test_an_object_whose_shape_raises_is_a_python_value():
    # anything with ``shape`` and ``dtype`` is read as an array; an object whose property raises
    # (a lazy dataset, a half-built tensor) is passed on as the Python value it is, not a crash
    class Lazy:
        dtype = "float32"

        @property
        def shape(self):
            raise RuntimeError("not materialised")

    lazy = Lazy()
    (spec,) = parse_convention([lazy], where="HLOVIZ_ARGS['f']").positional
    assert isinstance(spec, LiteralArg) and spec.value is lazy
