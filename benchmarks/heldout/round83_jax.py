"""Round 83 (held out, JAX): models written the way users write them, not looked at while building
anything.

* ``byol_lars_step``: one step of BYOL (Grill et al.) self-supervised learning on 16×16 RGB images,
  Flax ``linen``. One ``ByolNet`` module (``setup``: an ``encoder``, a ``projector`` and a
  ``predictor``; ``__call__`` gives the projection, a ``predict`` method the prediction). The
  encoder's two conv blocks (``nn.Conv`` → ``nn.BatchNorm`` → ReLU, the second strided) are
  wrapped in ``nn.remat`` with ``policy=jax.checkpoint_policies.checkpoint_dots`` (only the
  convolutions are saved for the backward pass); the projector and predictor are ``nn.Dense`` →
  ``nn.BatchNorm`` → ReLU → ``nn.Dense``. Two augmented views per image from ``jax.random``
  (random horizontal flip by ``jnp.where``, brightness jitter, Gaussian noise). The online network
  (``mutable=["batch_stats"]``) predicts the target network's projection of the other view
  (the target runs the same module with its own parameters and statistics, ``apply`` without the
  predictor, under ``jax.lax.stop_gradient``); the loss is the symmetrised ``2 - 2 cos``. The
  online parameters take one ``optax.lars`` step (``warmup_cosine_decay_schedule``, weight decay
  and the trust ratio masked off the biases and BatchNorm scales); the target is the EMA of the
  online encoder and projector (``optax.incremental_update``) with BYOL's cosine schedule of the
  EMA rate from the step count. The state is a plain ``dict``.
* ``deep_kernel_cg_step``: meta-learning regression with a deep kernel (few-shot sinusoids, a
  meta-batch of 8 tasks, ``jax.vmap`` over tasks): a Flax ``FeatureNet`` (``nn.Dense`` →
  ``nn.gelu`` → ``nn.LayerNorm`` → ``nn.Dense`` → ``nn.gelu`` → ``nn.Dense``) embeds the support
  and the query points (one submodule called twice); an RBF kernel with a learned
  ``log_lengthscale`` and ``log_noise`` (``self.param``); kernel ridge regression solved by
  ``jax.scipy.sparse.linalg.cg`` (a ``while_loop``; its gradient is a second CG solve through
  ``custom_linear_solve``), the query predictions ``K_qs @ alpha``, MSE on the query targets.
  One step of ``optax.chain(optax.clip_by_global_norm(1.0), optax.amsgrad(sgdr_schedule))`` in a
  ``flax.training.train_state.TrainState``.

Capture with ``hloviz dump benchmarks/heldout/round83_jax.py:byol_lars_step -o DIR`` and
``hloviz dump benchmarks/heldout/round83_jax.py:deep_kernel_cg_step -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

# --- BYOL: online/target networks, remat with a policy, LARS, EMA target ---------------------------

BATCH = 16
IMG = 16
TOTAL_STEPS = 1000
BASE_EMA = 0.996


class ConvBlock(nn.Module):
    features: int
    strides: int
    train: bool

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(self.features, (3, 3), strides=(self.strides, self.strides), use_bias=False, name="conv")(x)
        x = nn.BatchNorm(use_running_average=not self.train, momentum=0.9, name="bn")(x)
        return nn.relu(x)


RematBlock = nn.remat(ConvBlock, policy=jax.checkpoint_policies.checkpoint_dots)


class Encoder(nn.Module):
    train: bool

    @nn.compact
    def __call__(self, x):
        x = RematBlock(16, 1, self.train, name="block1")(x)
        x = RematBlock(32, 2, self.train, name="block2")(x)
        return jnp.mean(x, axis=(1, 2))


class MLPHead(nn.Module):
    hidden: int
    out: int
    train: bool

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.hidden, name="fc1")(x)
        x = nn.relu(nn.BatchNorm(use_running_average=not self.train, momentum=0.9, name="bn")(x))
        return nn.Dense(self.out, name="fc2")(x)


class ByolNet(nn.Module):
    train: bool = True

    def setup(self):
        self.encoder = Encoder(self.train)
        self.projector = MLPHead(64, 32, self.train)
        self.predictor = MLPHead(64, 32, self.train)

    def __call__(self, x):
        return self.projector(self.encoder(x))

    def predict(self, x):
        return self.predictor(self(x))


def augment(key, images):
    k_flip, k_bright, k_noise = jax.random.split(key, 3)
    flip = jax.random.bernoulli(k_flip, 0.5, (images.shape[0], 1, 1, 1))
    images = jnp.where(flip, images[:, :, ::-1, :], images)
    images = images * jax.random.uniform(k_bright, (images.shape[0], 1, 1, 1), minval=0.8, maxval=1.2)
    return images + 0.05 * jax.random.normal(k_noise, images.shape)


def byol_loss(p, z):
    p = p / jnp.linalg.norm(p, axis=-1, keepdims=True)
    z = z / jnp.linalg.norm(z, axis=-1, keepdims=True)
    return jnp.mean(2.0 - 2.0 * jnp.sum(p * z, axis=-1))


_byol = ByolNet()
_byol_vars = _byol.init(jax.random.PRNGKey(0), jnp.zeros((2, IMG, IMG, 3)), method=ByolNet.predict)
_decay_mask = jax.tree_util.tree_map_with_path(
    lambda path, _: path[-1].key not in ("bias", "scale"), _byol_vars["params"])
_lars = optax.lars(optax.warmup_cosine_decay_schedule(0.0, 0.2, 50, TOTAL_STEPS), weight_decay=1.5e-6,
                   weight_decay_mask=_decay_mask, trust_ratio_mask=_decay_mask, momentum=0.9)
_target_params = {k: _byol_vars["params"][k] for k in ("encoder", "projector")}
_target_stats = {k: _byol_vars["batch_stats"][k] for k in ("encoder", "projector")}
_byol_state = {
    "online_params": _byol_vars["params"],
    "online_stats": _byol_vars["batch_stats"],
    "target_params": _target_params,
    "target_stats": _target_stats,
    "opt_state": _lars.init(_byol_vars["params"]),
    "step": jnp.zeros((), jnp.int32),
}


@jax.jit
def byol_lars_step(state, images, key):
    k1, k2 = jax.random.split(key)
    view1, view2 = augment(k1, images), augment(k2, images)
    both = jnp.concatenate([view1, view2], axis=0)

    target_z, target_upd = _byol.apply({"params": state["target_params"], "batch_stats": state["target_stats"]},
                                       both, mutable=["batch_stats"])
    target_z = jax.lax.stop_gradient(target_z)
    t1, t2 = jnp.split(target_z, 2)

    def loss_fn(params):
        p, upd = _byol.apply({"params": params, "batch_stats": state["online_stats"]}, both,
                             method=ByolNet.predict, mutable=["batch_stats"])
        p1, p2 = jnp.split(p, 2)
        return byol_loss(p1, t2) + byol_loss(p2, t1), upd

    (loss, online_upd), grads = jax.value_and_grad(loss_fn, has_aux=True)(state["online_params"])
    updates, opt_state = _lars.update(grads, state["opt_state"], state["online_params"])
    online = optax.apply_updates(state["online_params"], updates)

    progress = state["step"].astype(jnp.float32) / TOTAL_STEPS
    tau = 1.0 - (1.0 - BASE_EMA) * (jnp.cos(jnp.pi * progress) + 1.0) / 2.0
    target = optax.incremental_update({k: online[k] for k in ("encoder", "projector")},
                                      state["target_params"], step_size=1.0 - tau)
    new_state = {
        "online_params": online,
        "online_stats": online_upd["batch_stats"],
        "target_params": target,
        "target_stats": target_upd["batch_stats"],
        "opt_state": opt_state,
        "step": state["step"] + 1,
    }
    return new_state, loss


# --- deep kernel ridge regression: shared feature net, RBF kernel, CG solve, AMSGrad ----------------

TASKS = 8
SUPPORT = 24
QUERY = 16


class FeatureNet(nn.Module):
    @nn.compact
    def __call__(self, x):
        h = nn.gelu(nn.Dense(64, name="feat_fc1")(x))
        h = nn.LayerNorm(name="feat_norm")(h)
        h = nn.gelu(nn.Dense(64, name="feat_fc2")(h))
        return nn.Dense(16, name="feat_out")(h)


class DeepKernelRegressor(nn.Module):
    @nn.compact
    def __call__(self, xs, ys, xq):
        features = FeatureNet(name="features")
        phi_s, phi_q = features(xs), features(xq)
        log_ls = self.param("log_lengthscale", nn.initializers.zeros, ())
        log_noise = self.param("log_noise", nn.initializers.constant(-2.0), ())

        def rbf(a, b):
            d2 = jnp.sum(a ** 2, -1)[:, None] - 2.0 * a @ b.T + jnp.sum(b ** 2, -1)[None, :]
            return jnp.exp(-0.5 * jnp.maximum(d2, 0.0) / jnp.exp(2.0 * log_ls))

        k_ss = rbf(phi_s, phi_s)
        noise = jnp.exp(log_noise)
        alpha, _ = jax.scipy.sparse.linalg.cg(lambda v: k_ss @ v + noise * v, ys, maxiter=25)
        return rbf(phi_q, phi_s) @ alpha


_dkl = DeepKernelRegressor()
_dkl_params = _dkl.init(jax.random.PRNGKey(1), jnp.zeros((SUPPORT, 1)), jnp.zeros((SUPPORT,)),
                        jnp.zeros((QUERY, 1)))["params"]
_dkl_state = train_state.TrainState.create(
    apply_fn=_dkl.apply, params=_dkl_params,
    tx=optax.chain(optax.clip_by_global_norm(1.0),
                   optax.amsgrad(optax.sgdr_schedule([{"init_value": 0.0, "peak_value": 1e-3, "warmup_steps": 20,
                                                        "decay_steps": 200, "end_value": 1e-5}] * 3))))


@jax.jit
def deep_kernel_cg_step(state, xs, ys, xq, yq):
    def loss_fn(params):
        pred = jax.vmap(lambda a, b, c: state.apply_fn({"params": params}, a, b, c))(xs, ys, xq)
        return jnp.mean(jnp.square(pred - yq))

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def _sinusoid_tasks(key):
    k_amp, k_phase, k_xs, k_xq = jax.random.split(key, 4)
    amp = jax.random.uniform(k_amp, (TASKS, 1), minval=0.1, maxval=5.0)
    phase = jax.random.uniform(k_phase, (TASKS, 1), maxval=jnp.pi)
    xs = jax.random.uniform(k_xs, (TASKS, SUPPORT, 1), minval=-5.0, maxval=5.0)
    xq = jax.random.uniform(k_xq, (TASKS, QUERY, 1), minval=-5.0, maxval=5.0)
    return xs, amp * jnp.sin(xs[..., 0] + phase), xq, amp * jnp.sin(xq[..., 0] + phase)


HLOVIZ_ARGS = {
    "byol_lars_step": [_byol_state, jax.random.uniform(jax.random.PRNGKey(2), (BATCH, IMG, IMG, 3)),
                       jax.random.PRNGKey(3)],
    "deep_kernel_cg_step": [_dkl_state, *_sinusoid_tasks(jax.random.PRNGKey(4))],
}
