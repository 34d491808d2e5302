"""One side of a diff as flat arrays: instruction numbers, operands, users, calls, fingerprints.

Matching touches every instruction several times, so each module is first turned into lists
indexed by a dense instruction number (computations in module order, instructions in text
order). Fingerprints are computed bottom-up, once per instruction, by hashing a tuple of the
instruction's own name-free, metadata-free content with its operands' fingerprints and the
fingerprints of the computations it calls — linear in the module, never printing a subtree.

Fingerprints use Python's tuple hashing: stable within one process (all a diff needs), 64-bit,
and fast. Nothing ordered by the diff depends on their values.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Sequence

from ...ir import Computation, HloModule, Instruction
from ...opcodes import PASS_THROUGH_CALLERS

#: Operand lists up to this long are searched directly; longer ones get an index built once.
_SEARCHED_OPERANDS = 64

#: Attributes that never make two instructions different.
IGNORED_ATTRIBUTES = frozenset({"metadata"})


def attribute_text(value: str) -> str:
    """Attribute text with insignificant spaces removed (``{1, 0}`` equals ``{1,0}``)."""
    if " " not in value and "\n" not in value:
        return value
    if '"' in value:  # spaces inside strings may matter; only runs of whitespace are folded
        return " ".join(value.split())
    return "".join(value.split())


class Side:
    """The arrays of one module. ``n`` is an instruction number, ``c`` a computation number."""

    def __init__(self, module: HloModule) -> None:
        self.module = module
        comps = list(module.computations)
        self.comps = comps
        self.comp_index: dict[Computation, int] = {c: k for k, c in enumerate(comps)}
        insts: list[Instruction] = []
        comp_of: list[int] = []
        comp_start: list[int] = []
        for k, c in enumerate(comps):
            comp_start.append(len(insts))
            insts.extend(c.instructions)
            comp_of.extend([k] * len(c.instructions))
        comp_start.append(len(insts))
        self.insts = insts
        self.comp_of = array("i", comp_of)
        self.comp_start = comp_start
        index = {inst: n for n, inst in enumerate(insts)}  # dropped at the end: 100 bytes an instruction
        get = index.__getitem__
        self.ops: list[tuple[int, ...]] = [tuple(map(get, i.operands)) if i.operands else () for i in insts]
        #: Computations whose text order is not operands-before-users (forward references).
        self._unordered: set[int] = set()
        #: Indexes of wide instructions' operands, built on first use (see ``operand_positions``).
        self._positions: dict[int, dict[int, list[int]]] = {}
        self._operand_sets: dict[int, frozenset[int]] = {}
        self._matched_users: dict[int, int] = {}  # see ``unmatched_users``
        self._users_index()
        self._calls(module)
        self.root = [index[c.root] if c.root is not None else -1 for c in comps]
        self.params: list[dict[int, int]] = [{} for _ in comps]
        for n, i in enumerate(insts):
            if i.parameter_number is not None:
                self.params[comp_of[n]].setdefault(i.parameter_number, n)
        self._fingerprint()

    def _users_index(self) -> None:
        """Users of every instruction as one flat array with offsets (4 bytes an edge, not a list
        per instruction): ``users(n)`` is ``flat[start[n]:start[n + 1]]``."""
        ops = self.ops
        count = len(self.insts)
        sources = [o for o_ in ops for o in o_]
        users = [n for n, o_ in enumerate(ops) for _ in o_]
        order = sorted(range(len(sources)), key=sources.__getitem__)  # stable: users stay in text order
        self._user_flat = array("i", [users[k] for k in order])
        del users, order
        per = Counter(sources)
        start = array("i", bytes(4 * (count + 1)))
        total = 0
        for n in range(count):
            start[n] = total
            total += per.get(n, 0)
        start[count] = total
        self._user_start = start
        comp_of, unordered = self.comp_of, self._unordered
        for n, o_ in enumerate(ops):
            if o_ and max(o_) > n:
                unordered.add(comp_of[n])

    def users(self, n: int, limit: int | None = None) -> array[int]:
        """The instructions that use ``n`` as an operand, in text order (repeats kept); only the
        first ``limit`` when given (a slice of the flat array copies it, so a capped search on
        an instruction with 40,000 users must not copy them all)."""
        start, end = self._user_start[n], self._user_start[n + 1]
        if limit is not None and end - start > limit:
            end = start + limit
        return self._user_flat[start:end]

    # -- calls ----------------------------------------------------------------------------

    def _calls(self, module: HloModule) -> None:
        comp_index = self.comp_index
        calls: list[tuple[int, ...]] = []
        callers: list[list[int]] = [[] for _ in self.comps]
        fusion_of_comp = [-1] * len(self.comps)
        empty: tuple[int, ...] = ()
        for n, inst in enumerate(self.insts):
            opcode = inst.opcode
            if not inst.called_computations:
                calls.append(empty)
                continue
            called = [comp_index[c] for c in inst.called_computations if c in comp_index]
            calls.append(tuple(called))
            for c in called:
                callers[c].append(n)
            if opcode == "fusion":
                for c in inst.calls_by_attribute.get("calls", ()):
                    k = comp_index.get(c)
                    if k is not None and fusion_of_comp[k] == -1:
                        fusion_of_comp[k] = n
        self.calls = calls
        self.callers = callers
        #: The fusion instruction whose fused computation this is, or -1.
        self.fusion_of_comp = fusion_of_comp

    def fusion_of(self, n: int) -> int:
        """The fusion instruction that instruction ``n`` runs inside (-1 when unfused)."""
        return self.fusion_of_comp[self.comp_of[n]]

    def single_caller(self, c: int) -> int:
        """The one instruction calling computation ``c`` with its operands as parameters, or -1."""
        cs = self.callers[c]
        if len(cs) == 1 and self.insts[cs[0]].opcode in PASS_THROUGH_CALLERS:
            return cs[0]
        return -1

    # -- fingerprints ---------------------------------------------------------------------

    def _local_hashes(self) -> array[int]:
        """Hash of what each instruction is by itself: no names, no metadata, no operands."""
        shape_hash: dict[int, int] = {}  # the parser shares Shape objects; hash each once
        ignored = IGNORED_ATTRIBUTES
        out = array("q")
        append = out.append
        comp_of, fusion_of_comp = self.comp_of, self.fusion_of_comp
        entry = self.comp_index.get(self.module.entry, -1) if self.module.entry is not None else -1
        for n, (inst, ops) in enumerate(zip(self.insts, self.ops)):
            shape = inst.shape
            sh = shape_hash.get(id(shape))
            if sh is None:
                sh = shape_hash[id(shape)] = hash(shape)
            attrs = inst.attributes
            items: tuple = ()
            if attrs and not (len(attrs) == 1 and "metadata" in attrs):  # most have metadata alone
                items = tuple(sorted([(k, v if " " not in v and "\n" not in v else attribute_text(v))
                                      for k, v in attrs.items() if k not in ignored]))
            sharing: tuple = ()
            if len(ops) > 1 and len(set(ops)) != len(ops):
                sharing = tuple([ops.index(o) for o in ops])  # add(x, x) differs from add(x, y)
            param = inst.parameter_number
            if param is not None:  # an entry's argument is not a fused computation's parameter
                c = comp_of[n]
                param = (param, 0 if c == entry else (1 if fusion_of_comp[c] >= 0 else 2))
            append(hash((inst.opcode, sh, items, inst.literal, param, sharing, len(inst.calls_by_attribute))))
        return out

    def _callee_first(self) -> list[int]:
        """Computations ordered so that every callee comes before its callers."""
        order: list[int] = []
        state = [0] * len(self.comps)  # 0 new, 1 open, 2 done
        comp_calls: list[set[int]] = [set() for _ in self.comps]
        for n, called in enumerate(self.calls):
            if called:
                comp_calls[self.comp_of[n]].update(called)
        for start in range(len(self.comps)):
            if state[start]:
                continue
            stack = [(start, iter(sorted(comp_calls[start])))]
            state[start] = 1
            while stack:
                c, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    stack.pop()
                    state[c] = 2
                    order.append(c)
                elif state[nxt] == 0:
                    state[nxt] = 1
                    stack.append((nxt, iter(sorted(comp_calls[nxt]))))
        return order

    def topological(self, c: int) -> Sequence[int]:
        """Instruction numbers of computation ``c``, operands before users."""
        a, b = self.comp_start[c], self.comp_start[c + 1]
        ops = self.ops
        if c not in self._unordered:
            return range(a, b)  # text order already is (the usual case)
        pending = {n: len(set(ops[n])) for n in range(a, b)}
        ready = [n for n in range(a, b) if pending[n] == 0]
        order = []
        while ready:
            n = ready.pop()
            order.append(n)
            for u in set(self.users(n)):
                pending[u] -= 1
                if pending[u] == 0:
                    ready.append(u)
        if len(order) != b - a:  # a cycle (invalid HLO): fall back to text order for the rest
            seen = set(order)
            order.extend(n for n in range(a, b) if n not in seen)
        return order

    def _fingerprint(self) -> None:
        n_insts = len(self.insts)
        # Compact arrays: 8 bytes per value instead of a pointer and an int object.
        fp = array("q", bytes(8 * n_insts))
        height = array("i", bytes(4 * n_insts))
        comp_fp = [0] * len(self.comps)
        ops, calls, local = self.ops, self.calls, self._local_hashes()
        self.order = self._callee_first()
        for c in self.order:
            a, b = self.comp_start[c], self.comp_start[c + 1]
            for n in (range(a, b) if c not in self._unordered else self.topological(c)):
                o = ops[n]
                if o:
                    height[n] = 1 + max([height[x] for x in o])
                    fo = tuple([fp[x] for x in o])
                else:
                    height[n] = 1
                    fo = ()
                k = calls[n]
                fp[n] = hash((local[n], fo, tuple([comp_fp[j] for j in k]) if k else ()))
            root = self.root[c]
            comp_fp[c] = hash((fp[root] if root >= 0 else 0,
                               tuple(sorted([fp[s] for s in self.sinks(c) if s != root]))))
        self.fp = fp
        self.local = local
        self.height = height
        self.comp_fp = comp_fp

    def sinks(self, c: int) -> list[int]:
        """Instructions of ``c`` that nothing in ``c`` uses (the root and dead or side-effect ops)."""
        start = self._user_start
        return [n for n in range(self.comp_start[c], self.comp_start[c + 1]) if start[n] == start[n + 1]]

    # -- neighbours across calls ----------------------------------------------------------

    def in_neighbours(self, n: int) -> tuple[int, ...]:
        """Operands, and for a parameter of a fused/called computation the caller's operand."""
        inst = self.insts[n]
        if inst.opcode == "parameter":
            caller = self.single_caller(self.comp_of[n])
            k = inst.parameter_number
            if caller >= 0 and k is not None and k < len(self.ops[caller]):
                return (self.ops[caller][k],)
            return ()
        return self.ops[n]

    def out_neighbours(self, n: int, limit: int | None = None, matched: array[int] | None = None) -> Sequence[int]:
        """Users, and for a called computation's root the calling instruction (the first
        ``limit`` users only, when given; from the first one not in ``matched``, when given)."""
        if matched is None:
            users = self.users(n, limit)
        else:
            users = self.unmatched_users(n, matched, limit if limit is not None else len(self.insts))
        c = self.comp_of[n]
        if self.root[c] == n:
            caller = self.single_caller(c)
            if caller >= 0:
                return [*users, caller]
        return users

    def unmatched_users(self, n: int, matched: array[int], limit: int) -> array[int]:
        """Up to ``limit`` users of ``n``, from the first one that ``matched`` says is unmatched.
        Matches are never undone, so the matched prefix is skipped once and remembered: a
        parameter with 40,000 users offers its unmatched ones in turn, not the same first few."""
        flat, lo, hi = self._user_flat, self._user_start[n], self._user_start[n + 1]
        k = lo + self._matched_users.get(n, 0)
        while k < hi and matched[flat[k]] != -1:
            k += 1
        if k > lo:
            self._matched_users[n] = k - lo
        return flat[k:min(hi, k + limit)]

    def operand_positions(self, u: int, n: int) -> list[int]:
        """Where ``n`` sits among the operands of ``u``. A wide instruction (a ROOT tuple of
        40,000 operands) gets a position index, built once, so asking for each of its operands
        in turn stays linear instead of searching the operand list every time."""
        ops = self.ops[u]
        if len(ops) <= _SEARCHED_OPERANDS:
            return [k for k, o in enumerate(ops) if o == n]
        where = self._positions.get(u)
        if where is None:
            where = self._positions[u] = {}
            for k, o in enumerate(ops):
                where.setdefault(o, []).append(k)
        return where.get(n, [])

    def operand_set(self, n: int) -> frozenset[int] | tuple[int, ...]:
        """The in-neighbours of ``n`` for membership tests: the tuple itself when short, a set
        built once when wide (``c in ops`` on 40,000 operands, per candidate, was quadratic)."""
        ops = self.in_neighbours(n)
        if len(ops) <= _SEARCHED_OPERANDS:
            return ops
        s = self._operand_sets.get(n)
        if s is None:
            s = self._operand_sets[n] = frozenset(ops)
        return s

    def signature(self, c: int) -> tuple:
        """Parameter and result shapes of computation ``c`` without layouts."""
        params = tuple(self.insts[self.params[c][k]].shape.to_text(layout=False) for k in sorted(self.params[c]))
        root = self.insts[self.root[c]].shape.to_text(layout=False) if self.root[c] >= 0 else ""
        return params, root
