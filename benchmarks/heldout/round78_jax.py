"""Round 78 (held out, JAX): models written the way users write them, not looked at while building
anything.

* ``realnvp_step``: a RealNVP normalizing flow in Flax ``linen`` — four ``AffineCoupling``
  submodules with alternating binary masks, each an ``nn.Dense`` MLP giving a ``tanh``-bounded
  log-scale and a shift, the log-determinant summed over the couplings, the base density by
  ``jax.scipy.stats.norm.logpdf``; the negative log-likelihood trained one step of
  ``optax.chain(optax.clip_by_global_norm(1.0), optax.radam(1e-3))``.
* ``double_dqn_step``: a double-DQN update — a Flax ``linen`` Q-network (``nn.Dense`` ×2 +
  ``nn.Dense`` per action), Q(s, a) by ``jnp.take_along_axis``, the next action chosen by the
  online network (``jnp.argmax``) and valued by the target network under
  ``jax.lax.stop_gradient``, ``optax.huber_loss`` of the TD error, one step of
  ``optax.rmsprop(centered=True)``, then the target parameters moved by
  ``optax.incremental_update`` (Polyak averaging) and ε-greedy next actions drawn with
  ``jax.random.bernoulli`` / ``jax.random.randint`` (returned, not differentiated).

Capture with ``hloviz dump benchmarks/heldout/round78_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

# --- RealNVP normalizing flow -----------------------------------------------------------------

DIM = 6


class AffineCoupling(nn.Module):
    mask: tuple
    hidden: int = 32

    @nn.compact
    def __call__(self, x):
        mask = jnp.asarray(self.mask, jnp.float32)
        h = nn.relu(nn.Dense(self.hidden, name="hidden1")(x * mask))
        h = nn.relu(nn.Dense(self.hidden, name="hidden2")(h))
        log_scale = jnp.tanh(nn.Dense(DIM, name="scale")(h)) * (1.0 - mask)
        shift = nn.Dense(DIM, name="shift")(h) * (1.0 - mask)
        y = x * mask + (1.0 - mask) * (x * jnp.exp(log_scale) + shift)
        return y, log_scale.sum(axis=-1)


class RealNVP(nn.Module):
    couplings: int = 4

    @nn.compact
    def __call__(self, x):
        log_det = jnp.zeros(x.shape[0])
        for i in range(self.couplings):
            mask = tuple(float((j + i) % 2) for j in range(DIM))
            x, ld = AffineCoupling(mask, name=f"coupling{i}")(x)
            log_det = log_det + ld
        return x, log_det


_flow = RealNVP()
_flow_params = _flow.init(jax.random.PRNGKey(0), jnp.zeros((64, DIM)))
_flow_opt = optax.chain(optax.clip_by_global_norm(1.0), optax.radam(1e-3))


@jax.jit
def realnvp_step(params, opt_state, batch):
    def nll(p):
        z, log_det = _flow.apply(p, batch)
        log_prob = jax.scipy.stats.norm.logpdf(z).sum(axis=-1) + log_det
        return -log_prob.mean()

    loss, grads = jax.value_and_grad(nll)(params)
    updates, opt_state = _flow_opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


# --- double DQN with a Polyak-averaged target network -----------------------------------------

OBS = 8
ACTIONS = 4


class QNetwork(nn.Module):
    @nn.compact
    def __call__(self, obs):
        x = nn.relu(nn.Dense(64, name="torso1")(obs))
        x = nn.relu(nn.Dense(64, name="torso2")(x))
        return nn.Dense(ACTIONS, name="q_values")(x)


_qnet = QNetwork()
_q_params = _qnet.init(jax.random.PRNGKey(1), jnp.zeros((32, OBS)))
_q_opt = optax.rmsprop(2.5e-4, decay=0.95, eps=1e-2, centered=True)


@jax.jit
def double_dqn_step(params, target_params, opt_state, key, obs, actions, rewards, next_obs, dones, epsilon):
    gamma = 0.99

    def td_loss(p):
        q = _qnet.apply(p, obs)
        q_taken = jnp.take_along_axis(q, actions[:, None], axis=-1)[:, 0]
        next_action = jnp.argmax(_qnet.apply(p, next_obs), axis=-1)
        next_q = _qnet.apply(target_params, next_obs)
        next_value = jnp.take_along_axis(next_q, next_action[:, None], axis=-1)[:, 0]
        target = jax.lax.stop_gradient(rewards + gamma * (1.0 - dones) * next_value)
        return optax.huber_loss(q_taken, target, delta=1.0).mean()

    loss, grads = jax.value_and_grad(td_loss)(params)
    updates, opt_state = _q_opt.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    target_params = optax.incremental_update(params, target_params, step_size=0.005)

    explore_key, action_key = jax.random.split(key)
    greedy = jnp.argmax(_qnet.apply(params, next_obs), axis=-1)
    explore = jax.random.bernoulli(explore_key, epsilon, greedy.shape)
    random_actions = jax.random.randint(action_key, greedy.shape, 0, ACTIONS)
    next_actions = jnp.where(explore, random_actions, greedy)
    return params, target_params, opt_state, loss, next_actions


HLOVIZ_ARGS = {
    "realnvp_step": [_flow_params, _flow_opt.init(_flow_params),
                     jax.random.normal(jax.random.PRNGKey(2), (64, DIM))],
    "double_dqn_step": [_q_params, _q_params, _q_opt.init(_q_params), jax.random.PRNGKey(3),
                        jnp.ones((32, OBS)), jnp.zeros((32,), jnp.int32), jnp.ones((32,)),
                        jnp.ones((32, OBS)), jnp.zeros((32,)), jnp.float32(0.1)],
}
