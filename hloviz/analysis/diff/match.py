"""Pairing the instructions of two modules whose names mean nothing across XLA versions.

The steps, each only touching what earlier steps left unmatched (in the spirit of XLA's
``hlo_diff`` "gumgraph" matcher; the code is ours):

1. **Computations**: the entries; then computations with a fingerprint found exactly once on
   each side, mapped instruction by instruction.
2. **Identical subgraphs**: instructions whose subtree fingerprint (content without names or
   metadata, hashed bottom-up with the operands' fingerprints) is unique on each side, tallest
   first; the whole subtree is mapped at once, and calls pair the called computations.
3. More **computations**: by the ``op_name`` of their callers, then by signature (unique pairs
   only), then identical leftovers in text order. Paired computations seed their roots and
   parameters.
4. **Top-down**: a matched pair matches its operands position by position (same opcode), and
   the roots and parameters of the computations it calls.
5. **Bottom-up**: every unmatched instruction looks for candidates of its opcode among the users
   of its matched operands' counterparts (and the operands of its matched users'), and among
   instructions with its ``metadata.op_name``; candidates are scored by matched neighbours,
   ``op_name``, source line, shape and content, and the best one above a threshold wins.
6. **Opcode changes**: the same with any opcode, but only on strong structural evidence
   (``dot`` → oneDNN ``custom-call`` with the same operands, users and op_name).
7. **Leftovers**: in paired computations, the one unmatched instruction of an opcode and shape
   on each side.

Every step is linear or near-linear in the module size; candidate lists are capped.
"""

from __future__ import annotations

from array import array

from .index import Side
from .scoring import Scorer


class Matcher:
    """Runs the steps above; results are in ``ma``/``mb`` (instruction) and ``ca``/``cb``."""

    def __init__(self, a: Side, b: Side) -> None:
        self.a, self.b = a, b
        self.ma = array("i", [-1]) * len(a.insts)  # compact: 4 bytes per instruction
        self.mb = array("i", [-1]) * len(b.insts)
        self.how: list[str] = [""] * len(a.insts)  # a-number → step that matched it
        self.matched = 0
        self.ca = [-1] * len(a.comps)
        self.cb = [-1] * len(b.comps)
        self.comp_how: dict[int, str] = {}
        self.work: list[int] = []
        self.scorer: Scorer | None = None
        self._sinks_a: dict[int, list[int]] = {}
        self._sinks_b: dict[int, list[int]] = {}
        self._op_names_a: dict[int, str] = {}
        self._op_names_b: dict[int, str] = {}
        self._fused_names_a: dict[int, frozenset[str]] = {}
        self._fused_names_b: dict[int, frozenset[str]] = {}
        #: (id of a Shape, with layout) → its text; for reports (the shapes outlive the matcher).
        self.shape_texts: dict[tuple[int, bool], str] = {}

    # -- primitives -----------------------------------------------------------------------

    def match(self, x: int, y: int, how: str) -> None:
        self.ma[x] = y
        self.mb[y] = x
        self.how[x] = how
        self.matched += 1
        self.work.append(x)

    def pair(self, cx: int, cy: int, how: str) -> None:
        self.ca[cx] = cy
        self.cb[cy] = cx
        self.comp_how[cx] = how

    def op_name_a(self, x: int) -> str:
        v = self._op_names_a.get(x)
        if v is None:
            v = self._op_names_a[x] = self.a.insts[x].metadata.op_name
        return v

    def op_name_b(self, y: int) -> str:
        v = self._op_names_b.get(y)
        if v is None:
            v = self._op_names_b[y] = self.b.insts[y].metadata.op_name
        return v

    def plausible(self, x: int, y: int) -> bool:
        """Could ``x`` and ``y`` be the same op? Not when both name ops, no op name is common
        to them (a fusion's names are those of everything it fuses) and their shapes or fusion
        kinds differ: a global pool's kCustom ``reduce`` is not the stem's kLoop GELU just
        because both are operand 0 of matched users."""
        ia, ib = self.a.insts[x], self.b.insts[y]
        if ia.shape == ib.shape and ia.attributes.get("kind") == ib.attributes.get("kind"):
            return True
        na, nb = self._names(self.a, x, self._fused_names_a), self._names(self.b, y, self._fused_names_b)
        if not na or not nb or not na.isdisjoint(nb):
            return True
        return ia.shape.to_text(layout=False) == ib.shape.to_text(layout=False) and \
            ia.attributes.get("kind") == ib.attributes.get("kind")

    @staticmethod
    def _names(side: Side, n: int, cache: dict[int, frozenset[str]]) -> frozenset[str]:
        """The op names of instruction ``n`` and, for a fusion, of everything it fuses."""
        got = cache.get(n)
        if got is None:
            inst = side.insts[n]
            names = {inst.metadata.op_name} if inst.metadata.op_name else set()
            if inst.opcode == "fusion":
                from ...ir import called_closure

                for comp in called_closure(inst.called_computations):
                    names.update(i.metadata.op_name for i in comp.instructions if i.metadata.op_name)
            got = cache[n] = frozenset(names)
        return got

    def _sorted_sinks(self, side: Side, cache: dict[int, list[int]], c: int) -> list[int]:
        s = cache.get(c)
        if s is None:
            root = side.root[c]
            s = [root] + sorted((n for n in side.sinks(c) if n != root), key=lambda n: (side.fp[n], n))
            cache[c] = s
        return s

    def exact_comp_pairs(self, cx: int, cy: int) -> list[tuple[int, int]]:
        """Start pairs for mapping two computations with equal fingerprints."""
        return list(zip(self._sorted_sinks(self.a, self._sinks_a, cx), self._sorted_sinks(self.b, self._sinks_b, cy)))

    def walk_exact(self, start: list[tuple[int, int]], how: str) -> None:
        """Map identical subgraphs pair by pair (equal fingerprints ⇒ same structure)."""
        a, b, ma, mb = self.a, self.b, self.ma, self.mb
        stack = list(reversed(start))
        while stack:
            x, y = stack.pop()
            if x < 0 or y < 0 or ma[x] != -1 or mb[y] != -1:
                continue
            self.match(x, y, how)
            stack.extend(zip(reversed(a.ops[x]), reversed(b.ops[y])))
            for cx, cy in zip(a.calls[x], b.calls[y]):
                if self.ca[cx] == -1 and self.cb[cy] == -1:
                    self.pair(cx, cy, "call")
                if self.ca[cx] == cy and a.comp_fp[cx] == b.comp_fp[cy]:
                    stack.extend(reversed(self.exact_comp_pairs(cx, cy)))

    # -- the steps ------------------------------------------------------------------------

    def run(self) -> None:
        a, b = self.a, self.b
        ea = a.comp_index.get(a.module.entry) if a.module.entry is not None else None
        eb = b.comp_index.get(b.module.entry) if b.module.entry is not None else None
        if ea is not None and eb is not None:
            self.pair(ea, eb, "entry")
        self._pair_unique(lambda side, c: side.comp_fp[c], "fingerprint")
        for cx, cy in enumerate(self.ca):
            if cy >= 0 and a.comp_fp[cx] == b.comp_fp[cy]:
                self.walk_exact(self.exact_comp_pairs(cx, cy), "exact")
        self.subgraphs()
        self._pair_unique(self._caller_key_a, "callers", side_b=self._caller_key_b)
        self._pair_unique(lambda side, c: (side.signature(c), self._caller_opcodes(side, c)), "signature")
        self._pair_identical_leftovers()
        self.seed_computations()
        self.drain()
        for _ in range(4):
            before = self.matched
            self.bottom_up(same_opcode=True)
            if self.matched == before:
                break
        before = self.matched
        self.bottom_up(same_opcode=False)
        if self.matched != before:
            self.bottom_up(same_opcode=True)
        self.leftovers()
        self.pair_by_callers()

    def _pair_unique(self, key_a, how: str, side_b=None) -> None:
        """Pair unpaired computations whose key occurs exactly once on each side."""
        key_b = side_b or key_a
        ka: dict[object, int] = {}
        for c in range(len(self.a.comps)):
            if self.ca[c] == -1:
                k = key_a(self.a, c) if side_b is None else key_a(c)
                if k is not None:
                    ka[k] = -1 if k in ka else c
        kb: dict[object, int] = {}
        for c in range(len(self.b.comps)):
            if self.cb[c] == -1:
                k = key_b(self.b, c) if side_b is None else key_b(c)
                if k is not None:
                    kb[k] = -1 if k in kb else c
        for k, cx in ka.items():
            cy = kb.get(k, -1)
            if cx >= 0 and cy >= 0:
                self.pair(cx, cy, how)

    def _caller_key(self, side: Side, c: int, op_name) -> object:
        names = {(side.insts[n].opcode, op_name(n)) for n in side.callers[c]}
        if not any(name for _, name in names):
            return None
        return tuple(sorted(names))

    def _caller_key_a(self, c: int) -> object:
        return self._caller_key(self.a, c, self.op_name_a)

    def _caller_key_b(self, c: int) -> object:
        return self._caller_key(self.b, c, self.op_name_b)

    @staticmethod
    def _caller_opcodes(side: Side, c: int) -> tuple[str, ...]:
        return tuple(sorted({side.insts[n].opcode for n in side.callers[c]}))

    def _pair_identical_leftovers(self) -> None:
        groups_a: dict[int, list[int]] = {}
        groups_b: dict[int, list[int]] = {}
        for c in range(len(self.a.comps)):
            if self.ca[c] == -1:
                groups_a.setdefault(self.a.comp_fp[c], []).append(c)
        for c in range(len(self.b.comps)):
            if self.cb[c] == -1:
                groups_b.setdefault(self.b.comp_fp[c], []).append(c)
        for f, cs in groups_a.items():
            for cx, cy in zip(cs, groups_b.get(f, ())):
                self.pair(cx, cy, "fingerprint")
                self.walk_exact(self.exact_comp_pairs(cx, cy), "exact")

    def subgraphs(self) -> None:
        """Step 2: unique identical subgraphs, tallest first."""
        a, b = self.a, self.b
        ua: dict[int, int] = {}
        for n, f in enumerate(a.fp):
            if self.ma[n] == -1:
                ua[f] = -1 if f in ua else n
        ub: dict[int, int] = {}
        for n, f in enumerate(b.fp):
            if self.mb[n] == -1:
                ub[f] = -1 if f in ub else n
        pairs = [(x, ub[f]) for f, x in ua.items() if x >= 0 and ub.get(f, -1) >= 0]
        pairs.sort(key=lambda p: (-a.height[p[0]], p[0]))
        for x, y in pairs:
            if self.ma[x] == -1 and self.mb[y] == -1:
                self.walk_exact([(x, y)], "subgraph")

    def seed_computations(self) -> None:
        """Paired computations match their roots (same opcode) and parameters by number."""
        for cx, cy in enumerate(self.ca):
            if cy >= 0:
                self._seed(cx, cy)

    def _seed(self, cx: int, cy: int) -> None:
        a, b, ma, mb = self.a, self.b, self.ma, self.mb
        rx, ry = a.root[cx], b.root[cy]
        if rx >= 0 and ry >= 0 and ma[rx] == -1 and mb[ry] == -1 and a.insts[rx].opcode == b.insts[ry].opcode:
            self.match(rx, ry, "top-down")
        pb = b.params[cy]
        for k, px in a.params[cx].items():
            py = pb.get(k, -1)
            if py >= 0 and ma[px] == -1 and mb[py] == -1:
                self.match(px, py, "top-down")

    def drain(self) -> None:
        """Step 4: propagate every new match to operands and called computations."""
        a, b, ma, mb = self.a, self.b, self.ma, self.mb
        work = self.work
        while work:
            x = work.pop()
            y = ma[x]
            ox, oy = a.ops[x], b.ops[y]
            for i in range(min(len(ox), len(oy))):
                p, q = ox[i], oy[i]
                if ma[p] == -1 and mb[q] == -1 and a.insts[p].opcode == b.insts[q].opcode and self.plausible(p, q):
                    self.match(p, q, "top-down")
            for cx, cy in zip(a.calls[x], b.calls[y]):
                if self.ca[cx] == -1 and self.cb[cy] == -1:
                    self.pair(cx, cy, "call")
                if self.ca[cx] == cy:
                    if a.comp_fp[cx] == b.comp_fp[cy]:
                        self.walk_exact(self.exact_comp_pairs(cx, cy), "exact")
                    else:
                        self._seed(cx, cy)

    # -- scored passes --------------------------------------------------------------------

    def bottom_up(self, same_opcode: bool) -> None:
        """Steps 5 and 6: best-scored candidate per unmatched instruction, operands first."""
        if self.scorer is None:
            self.scorer = Scorer(self)
        scorer = self.scorer
        a, ma = self.a, self.ma
        how = "bottom-up" if same_opcode else "opcode"
        for c in reversed(a.order):  # callers before callees: fusions before their insides
            for x in a.topological(c):
                if ma[x] != -1:
                    continue
                if not same_opcode and a.insts[x].opcode == "parameter":
                    continue
                best, best_score = -1, 0.0
                for y in scorer.candidates(x, same_opcode):
                    if not self.plausible(x, y):
                        continue
                    s, struct = scorer.score(x, y)
                    if same_opcode:
                        ok = s >= 3.0 and (struct > 0 or s >= 4.0)
                    else:
                        ok = struct >= 3.5 or (struct >= 2.0 and self.op_name_a(x) != "" and
                                               self.op_name_a(x) == self.op_name_b(y))
                    if ok and (s > best_score or (s == best_score and y < best)):
                        best, best_score = y, s
                if best >= 0:
                    self.match(x, best, how)
                    self.drain()

    def leftovers(self) -> None:
        """Step 7: in paired computations, the only unmatched op of an opcode and shape per side."""
        a, b = self.a, self.b
        for cx, cy in enumerate(self.ca):
            if cy < 0:
                continue
            ga: dict[tuple, list[int]] = {}
            for x in range(a.comp_start[cx], a.comp_start[cx + 1]):
                if self.ma[x] == -1:
                    ga.setdefault((a.insts[x].opcode, a.insts[x].shape), []).append(x)
            if not ga:
                continue
            gb: dict[tuple, list[int]] = {}
            for y in range(b.comp_start[cy], b.comp_start[cy + 1]):
                if self.mb[y] == -1:
                    gb.setdefault((b.insts[y].opcode, b.insts[y].shape), []).append(y)
            for key, xs in ga.items():
                ys = gb.get(key, ())
                if len(xs) == 1 and len(ys) == 1:
                    self.match(xs[0], ys[0], "leftover")
            self.drain()

    def pair_by_callers(self) -> None:
        """Unpaired computations called by matched instructions pair up, position by position."""
        a, b = self.a, self.b
        for x, y in enumerate(self.ma):
            if y >= 0:
                for cx, cy in zip(a.calls[x], b.calls[y]):
                    if self.ca[cx] == -1 and self.cb[cy] == -1:
                        self.pair(cx, cy, "call")
