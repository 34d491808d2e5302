"""Round 79 (held out, JAX): models written the way users write them, not looked at while building
anything.

* ``reptile_lion_step``: one outer step of Reptile (first-order meta-learning) for few-shot
  regression — a Flax ``linen`` MLP (``nn.Dense`` ×2 with ``nn.Dropout`` after each hidden layer
  and an ``nn.Dense`` output). A batch of tasks is drawn from a task pool with
  ``jax.random.categorical`` over per-task logits; for each task (``jax.vmap``) an inner loop
  ``lax.fori_loop`` of plain SGD steps on mini-batches shuffled by ``jax.random.permutation``
  with fresh dropout keys; the meta-gradient ``params - mean(adapted params)`` is applied by
  ``optax.lion``; then the new parameters are evaluated (deterministic, no dropout) on the query
  points of the drawn tasks.
* ``reinforce_step``: a REINFORCE policy-gradient update with a learned baseline — a Flax
  ``linen`` actor-critic (shared ``nn.Dense`` torso, a logits head and a value head) rolled out
  for 16 time steps in a batched toy point-mass environment inside ``lax.scan`` (actions sampled
  by ``jax.random.categorical``, log-probabilities by ``jax.nn.log_softmax``), discounted returns
  by a reversed ``lax.scan``, the policy loss with the advantage under ``lax.stop_gradient``, a
  value loss and an entropy bonus; one step of ``optax.sgd(momentum=0.9)``; then actions for the
  next states drawn again by ``jax.random.categorical`` from the updated policy (returned, not
  differentiated).

Capture with ``hloviz dump benchmarks/heldout/round79_jax.py:NAME -o DIR`` (the arguments are the
objects themselves, ``HLOVIZ_ARGS``).
"""
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax

# --- Reptile with dropout, shuffled inner mini-batches, Lion ---------------------------------

POOL = 16
TASKS = 4
SHOTS = 20
INNER_BATCH = 5
INNER_STEPS = 5
INNER_LR = 0.02


class Regressor(nn.Module):
    hidden: int = 40

    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.relu(nn.Dense(self.hidden, name="hidden1")(x))
        x = nn.Dropout(0.1, deterministic=not train, name="drop1")(x)
        x = nn.relu(nn.Dense(self.hidden, name="hidden2")(x))
        x = nn.Dropout(0.1, deterministic=not train, name="drop2")(x)
        return nn.Dense(1, name="out")(x)


_reg = Regressor()
_reg_params = _reg.init(jax.random.PRNGKey(0), jnp.zeros((1, 1)), train=False)["params"]
_meta_opt = optax.lion(1e-4, weight_decay=1e-4)


def _adapt(params, key, xs, ys):
    def inner(i, carry):
        fast, key = carry
        key, perm_key, drop_key = jax.random.split(key, 3)
        idx = jax.random.permutation(perm_key, SHOTS)[:INNER_BATCH]

        def loss(p):
            pred = _reg.apply({"params": p}, xs[idx], train=True, rngs={"dropout": drop_key})
            return jnp.mean((pred - ys[idx]) ** 2)

        grads = jax.grad(loss)(fast)
        fast = jax.tree_util.tree_map(lambda w, g: w - INNER_LR * g, fast, grads)
        return fast, key

    fast, _ = jax.lax.fori_loop(0, INNER_STEPS, inner, (params, key))
    return fast


@jax.jit
def reptile_lion_step(params, opt_state, key, task_logits, support_x, support_y, query_x, query_y):
    task_key, adapt_key = jax.random.split(key)
    task_ids = jax.random.categorical(task_key, task_logits, shape=(TASKS,))
    xs, ys = support_x[task_ids], support_y[task_ids]
    adapted = jax.vmap(_adapt, in_axes=(None, 0, 0, 0))(params, jax.random.split(adapt_key, TASKS), xs, ys)
    meta_grad = jax.tree_util.tree_map(lambda w, a: w - a.mean(axis=0), params, adapted)
    updates, opt_state = _meta_opt.update(meta_grad, opt_state, params)
    params = optax.apply_updates(params, updates)
    pred = jax.vmap(lambda x: _reg.apply({"params": params}, x, train=False))(query_x[task_ids])
    query_loss = jnp.mean((pred - query_y[task_ids]) ** 2)
    return params, opt_state, query_loss


# --- REINFORCE with a baseline on a toy point-mass environment --------------------------------

ENVS = 32
HORIZON = 16
N_ACTIONS = 3
GAMMA = 0.97


class ActorCritic(nn.Module):
    @nn.compact
    def __call__(self, obs):
        x = nn.tanh(nn.Dense(32, name="torso1")(obs))
        x = nn.tanh(nn.Dense(32, name="torso2")(x))
        logits = nn.Dense(N_ACTIONS, name="policy_logits")(x)
        value = nn.Dense(1, name="value")(x)[..., 0]
        return logits, value


def _env_step(state, action):
    force = action.astype(jnp.float32) - 1.0
    pos, vel = state[:, 0], state[:, 1]
    vel = 0.95 * vel + 0.1 * force
    pos = pos + 0.1 * vel
    reward = -(pos ** 2) - 0.01 * force ** 2
    return jnp.stack([pos, vel], axis=-1), reward


_ac = ActorCritic()
_ac_params = _ac.init(jax.random.PRNGKey(1), jnp.zeros((ENVS, 2)))
_pg_opt = optax.sgd(1e-2, momentum=0.9)


@jax.jit
def reinforce_step(params, opt_state, key, start_states):
    rollout_key, next_key = jax.random.split(key)

    def loss_fn(p):
        def step(carry, _):
            state, key = carry
            key, sample_key = jax.random.split(key)
            logits, value = _ac.apply(p, state)
            action = jax.random.categorical(sample_key, logits)
            log_probs = jax.nn.log_softmax(logits)
            log_prob = jnp.take_along_axis(log_probs, action[:, None], axis=-1)[:, 0]
            entropy = -jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1)
            next_state, reward = _env_step(state, action)
            return (next_state, key), (log_prob, value, entropy, reward)

        (final_state, _), (log_prob, value, entropy, reward) = jax.lax.scan(
            step, (start_states, rollout_key), None, length=HORIZON)

        def discount(ret, r):
            ret = r + GAMMA * ret
            return ret, ret

        _, returns = jax.lax.scan(discount, jnp.zeros(ENVS), reward, reverse=True)
        advantage = jax.lax.stop_gradient(returns - value)
        policy_loss = -jnp.mean(log_prob * advantage)
        value_loss = 0.5 * jnp.mean((returns - value) ** 2)
        loss = policy_loss + 0.5 * value_loss - 0.01 * jnp.mean(entropy)
        return loss, (final_state, reward.sum(axis=0).mean())

    (loss, (final_state, mean_return)), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = _pg_opt.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    next_logits, _ = _ac.apply(params, final_state)
    next_actions = jax.random.categorical(next_key, next_logits)
    return params, opt_state, loss, mean_return, next_actions


HLOVIZ_ARGS = {
    "reptile_lion_step": [_reg_params, _meta_opt.init(_reg_params), jax.random.PRNGKey(2),
                          jnp.zeros((POOL,)),
                          jax.random.uniform(jax.random.PRNGKey(3), (POOL, SHOTS, 1), minval=-5.0, maxval=5.0),
                          jnp.zeros((POOL, SHOTS, 1)),
                          jax.random.uniform(jax.random.PRNGKey(4), (POOL, 10, 1), minval=-5.0, maxval=5.0),
                          jnp.zeros((POOL, 10, 1))],
    "reinforce_step": [_ac_params, _pg_opt.init(_ac_params), jax.random.PRNGKey(5),
                       jax.random.normal(jax.random.PRNGKey(6), (ENVS, 2))],
}
