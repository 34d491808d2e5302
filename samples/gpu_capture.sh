#!/usr/bin/env bash
# Captures of the JAX samples compiled for a GPU, with XLA's own records beside them.
#
# Run from the project root on a machine with an NVIDIA GPU and JAX for CUDA:
#     bash samples/gpu_capture.sh OUT
# OUT/captures/gpu_NAME/   hloviz dump of each sample (pre.hlo, post.hlo, capture.json, memory.json)
# OUT/records/NAME/        XLA's dump of the same compile: the optimized module and its
#                          buffer assignment (--xla_dump_to), the tests' independent oracle
# OUT/passes/NAME.tar.xz   XLA's per-pass snapshots of one small module (--xla_dump_hlo_pass_re=.*)
# samples/captures/gpu/ holds what this wrote on an NVIDIA H200 (see samples/README.md).
set -u
out=${1:?usage: gpu_capture.sh OUT}
mkdir -p "$out/captures" "$out/records" "$out/passes"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
targets="
fused_additions=jax_fused_additions.py:fused_additions
fused_additions_const=jax_fused_additions.py:fused_additions_const
jax_mlp=jax_mlp.py:mlp
jax_scopes=jax_scopes.py:train_step
jax_donated=jax_donated.py:train_step
jax_gpt_step=jax_gpt_step.py:train_step
flax_train_step=flax_model.py:train_step
loops_vit=loops.py:vit_forward
loops_vit_train=loops.py:vit_train_step
loops_rnn_scan=loops.py:rnn_scan
loops_newton=loops.py:batched_newton
"
for line in $targets; do
  name=${line%%=*}; target=${line#*=}
  rec=$(mktemp -d)
  start=$(date +%s.%N)
  XLA_FLAGS="--xla_dump_to=$rec" timeout 300 "$py" -m hloviz dump "samples/$target" -o "$out/captures/gpu_$name" \
    || echo "FAILED: $name"
  echo "$name: $(awk "BEGIN{print $(date +%s.%N) - $start}") s"
  # The jit module's optimized text and buffer assignment (the dump holds every module compiled).
  mkdir -p "$out/records/$name"
  cp "$rec"/*after_optimizations*.txt "$out/records/$name/" 2>/dev/null
  rm -rf "$rec"
done
for line in fused_additions=jax_fused_additions.py:fused_additions jax_mlp=jax_mlp.py:mlp; do
  name=${line%%=*}; target=${line#*=}
  rec=$(mktemp -d)
  XLA_FLAGS="--xla_dump_to=$rec --xla_dump_hlo_pass_re=.*" timeout 300 "$py" -m hloviz dump "samples/$target" -o "$rec.capture" \
    || echo "FAILED: passes of $name"
  fn=${target#*:}
  (cd "$rec" && tar cJf "$out/passes/$name.tar.xz" $(ls | grep -E "^module_[0-9]+\.jit_${fn}\..*\.txt$"))
  rm -rf "$rec" "$rec.capture"
done
