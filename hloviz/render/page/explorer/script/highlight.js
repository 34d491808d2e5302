  // ---- highlight and selection --------------------------------------------------------------
  var lit = [];
  function clearLit() {
    lit.forEach(function (el) { el.classList.remove("hv-hl", "hv-sel"); });
    lit = [];
    var svg = viewport.querySelector("svg");
    if (svg) svg.classList.remove("hv-dimmed");
  }
  function light(gs, selected) {
    clearLit();
    var idx = indexView(state.view), svg = viewport.querySelector("svg"), seen = new Set();
    gs.forEach(function (g) {
      var cid = idx.clusterOf.get(g);
      if (cid !== undefined && !seen.has(cid)) {
        seen.add(cid);
        var cel = idx.els.get(cid);
        if (cel) { cel.classList.add("hv-hl"); lit.push(cel); }
      }
      var id = idx.byInst.get(g);
      if (id === undefined || seen.has(id)) return;
      seen.add(id);
      var el = idx.els.get(id);
      if (el) { el.classList.add("hv-hl"); lit.push(el); }
    });
    if (selected) {
      selected.forEach(function (el) { el.classList.add("hv-sel"); lit.push(el); });
    }
    if (lit.length && svg) svg.classList.add("hv-dimmed");
    return seen.size;
  }
  function nodeEl(g) {
    var idx = indexView(state.view), id = idx.clusterOf.get(g);
    if (id === undefined) id = idx.byInst.get(g);
    return id === undefined ? null : idx.els.get(id) || null;
  }
  // Does view v draw g as a box (or cluster) of its own?
  function ownBox(v, g) {
    var idx = indexView(v), id = idx.byInst.get(g);
    return idx.clusterOf.has(g) || (id !== undefined && views[v].nodes[id][1].length === 1);
  }
  function select(g, opts) {
    opts = opts || {};
    state.sel = g;
    state.selScope = null;
    var el = opts.el || nodeEl(g);
    light(related(g), el ? [el] : []);
    if (el && opts.centre) centreOn(el);
    panel(g);
    markRows(g);
    if (!opts.keepHash) writeHash();
  }
  function markRows(g) {
    var kids = g === null ? [] : kernelsOf(g).map(function (k) { return D.kernels[k].name; });
    doc.querySelectorAll("#hv-kernels tbody tr").forEach(function (tr) {
      tr.classList.toggle("hv-row-sel", kids.indexOf(tr.getAttribute("data-kernel")) >= 0);
    });
  }
  function hover(g) {
    if (g === null) {
      if (state.sel !== null) light(related(state.sel), nodeEl(state.sel) ? [nodeEl(state.sel)] : []);
      else if (state.selScope !== null && state.selScope !== undefined) lightScope(state.selScope);
      else clearLit();
      return;
    }
    light(related(g), []);
  }
  // A box that stands for a layer (a closed scope, or an open one's cluster): its scope, else -1.
  function scopeBox(v, id) {
    var info = views[v], c = info.clusters[id], n = info.nodes[id];
    if (c) return c[1] < 0 && c[2] >= 0 ? c[2] : -1;
    return n && n[2] >= 0 ? n[2] : -1;
  }
  // The instruction a box stands for: the fusion of a cluster, the kernel of a box, else its first member.
  function primary(v, id) {
    var info = views[v];
    if (info.clusters[id]) return info.clusters[id][1];
    var node = info.nodes[id];
    if (!node) return -1;
    var gs = node[1];
    for (var i = 0; i < gs.length; i++) if (D.kernels.length && inst(gs[i]).kernel >= 0 && D.kernels[inst(gs[i]).kernel].inst === gs[i]) return gs[i];
    for (var j = 0; j < gs.length; j++) { var op = inst(gs[j]).opcode; if (op !== "parameter" && op !== "constant") return gs[j]; }
    return gs[0];
  }
  function boxOf(target) {
    var el = target.closest ? target.closest("g.node, g.cluster") : null;
    var id = el ? el.getAttribute("data-box") : null;
    return id ? { el: el, id: id } : null;
  }
  function initClicks() {
    viewport.addEventListener("click", function (e) {
      if (viewport.getAttribute("data-dragged")) { viewport.removeAttribute("data-dragged"); return; }
      var box = boxOf(e.target);
      if (!box) return;
      var si = scopeBox(state.view, box.id);
      if (si >= 0) { selectScope(si, { el: box.el }); viewport.focus({ preventScroll: true }); return; }
      var g = primary(state.view, box.id);
      if (g >= 0) { select(g, { el: box.el }); viewport.focus({ preventScroll: true }); }
    });
    viewport.addEventListener("dblclick", function (e) {
      var box = boxOf(e.target);
      if (!box) return;
      var w = viewOpeningBlock(state.view, box.id);
      if (w >= 0) { openBlock(w, box.id, false); return; }
      var si = scopeBox(state.view, box.id);
      if (si >= 0) { if (!openScope(si)) notServed(box.id); return; }
      var g = primary(state.view, box.id);
      if (!(g >= 0 && expand(g))) notServed(box.id);
    });
    var last = null;
    viewport.addEventListener("mouseover", function (e) {
      var box = boxOf(e.target), id = box ? box.id : null;
      if (id === last) return;
      last = id;
      var si = box ? scopeBox(state.view, box.id) : -1;
      if (si >= 0) { lightScope(si, [box.el]); return; }
      var g = box ? primary(state.view, box.id) : -1;
      hover(g >= 0 ? g : null);
    });
    viewport.addEventListener("mouseleave", function () { last = null; hover(null); });
  }
  // A box of a page opened as a file whose picture hloviz would draw on demand: say how to get it.
  function notServed(id) {
    if (!undrawn.size) return;
    var v = state.view, n = views[v].nodes[id], keys = [], si = scopeBox(v, id), g = primary(v, id);
    if (n && n[3]) keys.push("t:" + n[3]);
    if (si >= 0) keys.push("s:" + D.scopes.path[si]);
    [g, g >= 0 ? ownerOf(g) : -1].forEach(function (x) {
      if (x >= 0) { var i = inst(x); keys.push("i:" + i.side.key + ":" + i.name); }
    });
    if (keys.some(function (k) { return undrawn.has(k); })) {
      say("hloviz draws this box's picture when it serves the report: hloviz show TARGET --open " +
          "(or --offline, to draw every picture into the file)");
    }
  }
  function expand(g) {
    var v = viewOpening(g);
    if (v < 0) { var o = ownerOf(g); v = o >= 0 ? viewOpening(o) : -1; }
    if (v < 0) return false;
    if (v !== state.view) openedFrom[v] = state.view;  // its breadcrumb goes back to where it was opened
    showView(v, function () { select(g, { centre: true }); });
    return true;
  }
  function collapse() {
    var from = state.view, back = parentOf(from), g = state.sel;
    if (back < 0) return;
    var keyed = viewport.contains(doc.activeElement);
    showView(back, function () {
      if (g !== null) select(g, { centre: true }); else writeHash();
      var o = openedBox[from];
      var el = o && o.view === back ? viewport.querySelector("svg g[data-box='" + o.id + "']") : null;
      if (keyed) { (el || viewport).focus({ preventScroll: true }); if (el) reveal(el); }
    });
  }

  // Jump to instruction g: the view where it has a box of its own if there is one, else where it is drawn.
  function jump(g) {
    if (ownBox(state.view, g)) { select(g, { centre: true }); return; }
    var target = -1;
    for (var v = 0; v < views.length && target < 0; v++) {
      if (v === state.view) continue;
      var info = views[v];
      if (v === 0 || viewEls[v]) { if (ownBox(v, g)) target = v; continue; }
      for (var id in info.nodes) {  // not shown yet: read its data only
        if (info.nodes[id][1].length === 1 && info.nodes[id][1][0] === g) { target = v; break; }
      }
      if (target < 0) for (var cid in info.clusters) if (info.clusters[cid][1] === g) { target = v; break; }
    }
    if (target < 0) target = layerToDraw(g);
    if (target < 0) target = indexView(state.view).byInst.has(g) ? state.view : 0;
    showView(target, function () { select(g, { centre: true }); });
  }
  // The innermost layer holding g whose picture the server has still to draw (a placeholder:
  // its boxes are unknown until then, and a layer's own picture draws its ops), or -1.
  function layerToDraw(g) {
    var side = sides[sideOf(g)];
    for (var si = side.sc[g - side.offset]; si >= 0; si = D.scopes.parent[si]) {
      var v = viewByKey("s:" + D.scopes.path[si]);
      if (v >= 0 && views[v].lazy) return v;
    }
    return -1;
  }

