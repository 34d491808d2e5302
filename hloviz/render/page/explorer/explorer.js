/* hloviz explorer: search, expand, click, cross-highlight, pan and zoom over pictures that
   Graphviz laid out when the page was made. Reads only the page's own data blocks; builds every
   element with textContent (never innerHTML for data), so no string from the HLO is markup. */
(function () {
  "use strict";
  var doc = document;
  doc.documentElement.classList.add("hv-js");
  var root = doc.getElementById("hv");
  var viewport = doc.getElementById("hv-viewport");

  // ---- data -------------------------------------------------------------------------------
  function bytesOf(b64) {
    var bin = atob(b64), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
  function readBlock(id) {
    var el = doc.getElementById(id);
    if (!el) return Promise.resolve(null);
    if (el.getAttribute("data-encoding") !== "gzip-base64") return Promise.resolve(JSON.parse(el.textContent));
    var stream = new Blob([bytesOf(el.textContent.trim())]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }
  // The other pictures and the HLO text come after this script in the page: read them once
  // the browser has parsed the whole document.
  var parsed = new Promise(function (resolve) {
    if (doc.readyState !== "loading") resolve(); else doc.addEventListener("DOMContentLoaded", resolve);
  });
  var lazy = {};
  function block(id) {
    return lazy[id] || (lazy[id] = (id === "hv-data" ? Promise.resolve() : parsed).then(function () { return readBlock(id); }));
  }

  var D = null, S = null, sides = [], total = 0;
  var base = 0;  // the page's own sides; a pass history's snapshots follow them (D.base)
  var state = { view: 0, sel: null, selScope: null };
  var views = [], viewEls = {}, viewIndex = {};

  function sideOf(g) {
    for (var s = sides.length - 1; s >= 0; s--) if (g >= sides[s].offset) return s;
    return 0;
  }
  function str(i) { return i >= 0 ? S[i] : ""; }
  function inst(g) {
    var s = sideOf(g), side = sides[s], k = g - side.offset;
    return { g: g, s: s, side: side, name: side.name[k], opcode: str(side.op[k]), shape: str(side.shape[k]),
             opName: str(side.opn[k]), opn: side.opn[k], src: str(side.src[k]), comp: side.comps[side.comp[k]] || "",
             compIndex: side.comp[k], calls: side.calls[k], kernel: side.kernel[k] };
  }
  var byName = null;
  function find(sideKey, name) {
    if (!byName) {
      byName = sides.map(function (side) {
        var m = new Map();
        for (var k = 0; k < side.count; k++) if (!m.has(side.name[k])) m.set(side.name[k], side.offset + k);
        return m;
      });
    }
    for (var s = 0; s < sides.length; s++) {
      if (sideKey && sides[s].key !== sideKey) continue;
      var g = byName[s].get(name);
      if (g !== undefined) return g;
    }
    return -1;
  }

  // Links between pre-optimization ops, kernels, folded constants and diff pairs.
  var links = null;
  function buildLinks() {
    if (links) return links;
    links = { kernelInsts: {}, kernelPre: {}, foldOfPre: {}, foldOfPost: {}, pair: {}, opk: D.opk || {} };
    sides.forEach(function (side) {
      for (var k = 0; k < side.count; k++) {
        var kid = side.kernel[k];
        if (kid >= 0) (links.kernelInsts[kid] || (links.kernelInsts[kid] = [])).push(side.offset + k);
      }
    });
    if (base === 2 && D.opk) {
      var pre = sides[0];
      for (var k2 = 0; k2 < pre.count; k2++) {
        var ks = D.opk[pre.opn[k2]];
        if (ks) ks.forEach(function (kid) { (links.kernelPre[kid] || (links.kernelPre[kid] = [])).push(pre.offset + k2); });
      }
    }
    (D.folds || []).forEach(function (f, i) {
      f.pre.forEach(function (g) { links.foldOfPre[g] = i; });
      if (f.inst >= 0) links.foldOfPost[f.inst] = i;
    });
    (D.pairs || []).forEach(function (p) { links.pair[p[0]] = p; links.pair[p[1]] = p; });
    return links;
  }
  function kernelsOf(g) {
    var i = inst(g), L = buildLinks();
    if (i.kernel >= 0) return [i.kernel];
    if (i.s === 0 && base === 2 && L.opk[i.opn]) return L.opk[i.opn];
    return [];
  }
  // Everything that lights up with instruction g: its kernels with their instructions and the
  // pre-optimization ops whose work went into them, its folded constant, its diff partner.
  function related(g) {
    var L = buildLinks(), out = new Set([g]);
    kernelsOf(g).forEach(function (kid) {
      out.add(D.kernels[kid].inst);
      (L.kernelInsts[kid] || []).forEach(function (x) { out.add(x); });
      (L.kernelPre[kid] || []).forEach(function (x) { out.add(x); });
    });
    var f = L.foldOfPre[g] !== undefined ? L.foldOfPre[g] : L.foldOfPost[g];
    if (f !== undefined) { out.add(D.folds[f].inst); D.folds[f].pre.forEach(function (x) { out.add(x); }); }
    var p = L.pair[g];
    if (p) { addPair(out, p); }
    kernelsOf(g).forEach(function (kid) { var q = L.pair[D.kernels[kid].inst]; if (q) addPair(out, q); });
    return out;
  }
  function addPair(out, p) {
    var L = buildLinks();
    [p[0], p[1]].forEach(function (x) {
      out.add(x);
      var i = inst(x);
      if (i.kernel >= 0) (L.kernelInsts[i.kernel] || []).forEach(function (y) { out.add(y); });
    });
  }

  // ---- views: one SVG at a time in the viewport -------------------------------------------
  function indexView(v) {
    if (viewIndex[v]) return viewIndex[v];
    var info = views[v], byInst = new Map(), els = new Map(), clusterOf = new Map();
    var svg = viewEls[v];
    svg.querySelectorAll("g.node, g.cluster").forEach(function (el) {
      var id = el.getAttribute("data-box");
      if (id) els.set(id, el);
    });
    Object.keys(info.nodes).forEach(function (id) {
      info.nodes[id][1].forEach(function (g) {
        var have = byInst.get(g);
        if (have === undefined) byInst.set(g, id);
        else if (info.nodes[have][1].length > info.nodes[id][1].length) byInst.set(g, id);
      });
    });
    Object.keys(info.clusters).forEach(function (id) {
      var owner = info.clusters[id][1];
      if (owner >= 0 && !clusterOf.has(owner)) clusterOf.set(owner, id);
    });
    return (viewIndex[v] = { byInst: byInst, els: els, clusterOf: clusterOf });
  }
  function svgOf(v) {
    if (viewEls[v]) return Promise.resolve(viewEls[v]);
    return block("hv-svgs").then(function (svgs) {
      var holder = doc.createElement("div");
      holder.innerHTML = svgs[v];  // Graphviz's own SVG output, made when the page was written
      var svg = holder.querySelector("svg");
      prepare(svg);
      focusable(v, svg);
      viewEls[v] = svg;
      return svg;
    });
  }
  function showView(v, then) {
    return svgOf(v).then(function (svg) {
      if (state.view !== v || !viewport.contains(svg)) {
        var old = viewport.querySelector("svg");
        if (old) viewport.removeChild(old);
        viewport.appendChild(svg);
        state.view = v;
        prepare(svg);
        fit();
      }
      crumbs();
      pairNote(state.view);
      if (then) then();
    });
  }
  // Graphviz writes each box's DOT id (n7, cluster_3) as its group's <title>, which browsers
  // would show as a tooltip: it moves to data-box (the box's own tooltip stays on its link).
  function prepare(svg) {
    if (svg.getAttribute("data-hv")) return;
    svg.setAttribute("data-hv", "1");
    svg.querySelectorAll("g.node > title, g.cluster > title, g.edge > title, g.graph > title").forEach(function (t) {
      t.parentNode.setAttribute("data-box", t.textContent);
      t.parentNode.removeChild(t);
    });
  }
  // Keyboard: every box the view's data knows is a button in the tab order (Enter or Space opens
  // it where it opens, else selects it; Escape goes back up), named by its label for screen readers.
  function focusable(v, svg) {
    var info = views[v];
    svg.querySelectorAll("g.node[data-box]").forEach(function (g) {
      var id = g.getAttribute("data-box");
      if (!info.nodes[id]) return;
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      var text = Array.prototype.map.call(g.querySelectorAll("text"), function (t) { return t.textContent; }).join(" ");
      var opens = viewOpeningBlock(v, id) >= 0 ? " (opens in place)" : "";
      g.setAttribute("aria-label", text.replace(/\s+/g, " ").trim() + opens);
    });
  }
  function crumbs() {
    var nav = doc.getElementById("hv-crumbs");
    nav.textContent = "";
    var chain = [], v = state.view;
    while (v !== null && v !== undefined && v >= 0 && chain.indexOf(v) < 0) {
      chain.unshift(v);
      v = parentOf(v);
    }
    chain.forEach(function (c, i) {
      if (i) nav.appendChild(doc.createTextNode(" \u203a "));
      var b = doc.createElement("button");
      b.type = "button";
      b.textContent = c === 0 ? "whole module" : views[c].title;
      if (c === state.view) b.setAttribute("aria-current", "page");
      else b.addEventListener("click", function () { showView(c).then(writeHash); });
      nav.appendChild(b);
    });
    filmMark();
  }
  // The view a view goes back up to: the one it was opened from (a fusion drawn inside an opened
  // layer opens from there), else the one it was drawn to expand.
  var openedFrom = {};
  function parentOf(v) {
    if (openedFrom[v] !== undefined) return openedFrom[v];
    var p = views[v].parent;
    return p ? viewByKey(p) : -1;
  }
  function viewByKey(key) {
    for (var i = 0; i < views.length; i++) if (views[i].key === key) return i;
    return -1;
  }
  // The view that opens (expands) instruction g, if one was drawn.
  function viewOpening(g) {
    var i = inst(g), key = "i:" + i.side.key + ":" + i.name;
    for (var v = 0; v < views.length; v++) if (views[v].opens === key) return v;
    return -1;
  }
  // The view that opens box id of view v in place (a closed block or ×N repeat), or -1.
  function viewOpeningBlock(v, id) {
    var n = views[v].nodes[id], key = n && n[3] ? "t:" + n[3] : null;
    if (!key) return -1;
    for (var w = 0; w < views.length; w++) if (views[w].opens === key) return w;
    return -1;
  }
  // Which box of which view a view was opened from (focus returns there when it closes).
  var openedBox = {};
  function openBlock(w, fromBox, byKey) {
    if (w !== state.view) openedFrom[w] = state.view;  // its breadcrumb goes back to where it was opened
    if (fromBox) openedBox[w] = { view: state.view, id: fromBox };
    var held = fromBox && views[state.view].nodes[fromBox] ? views[state.view].nodes[fromBox][1] : [];
    showView(w).then(function () {
      writeHash();
      if (byKey) focusFirst(held);
    });
  }
  // After a keyboard open: focus the first box holding what the opened box held (else the picture).
  function focusFirst(held) {
    var want = new Set(held), target = null, svg = viewport.querySelector("svg");
    svg.querySelectorAll("g.node[tabindex]").forEach(function (g) {
      if (target) return;
      var n = views[state.view].nodes[g.getAttribute("data-box")];
      if (n && n[1].some(function (x) { return want.has(x); })) target = g;
    });
    (target || viewport).focus({ preventScroll: true });
    if (target) reveal(target);
  }
  // The paired column's note: what the other column opened with this one, or why it opened nothing.
  function pairNote(w) {
    var status = doc.getElementById("hv-status");
    if (!status) return;
    var p = views[w] && views[w].pair;
    status.textContent = p ? p.note : "";
    status.hidden = !p;
  }
  // The fusion instruction whose body holds g (one level up), or -1.
  function ownerOf(g) {
    var i = inst(g), side = i.side;
    for (var k = 0; k < side.count; k++) if (side.calls[k] === i.compIndex) return side.offset + k;
    return -1;
  }

  // ---- pan and zoom -----------------------------------------------------------------------
  var pz = { x: 0, y: 0, s: 1 };
  function apply() {
    var svg = viewport.querySelector("svg");
    if (svg) svg.style.transform = "translate(" + pz.x + "px," + pz.y + "px) scale(" + pz.s + ")";
  }
  function svgSize(svg) {
    var w = svg.width.baseVal.value, h = svg.height.baseVal.value;
    return { w: w || 1, h: h || 1 };
  }
  // The smallest text a picture opens with, in points at its zoom: a picture is first shown no
  // smaller than this (boxes, not dots; issue 33), from its top, where the input is; "fit" (0)
  // shows it whole however small.
  var LEGIBLE_PT = 10;
  function smallestFont(svg) {
    var least = Infinity;
    svg.querySelectorAll("text[font-size]").forEach(function (t) {
      var f = parseFloat(t.getAttribute("font-size"));
      if (f > 0 && f < least) least = f;
    });
    return least;
  }
  function fit(whole) {
    var svg = viewport.querySelector("svg");
    if (!svg) return;
    var size = svgSize(svg), vw = viewport.clientWidth, vh = viewport.clientHeight;
    pz.s = Math.min(1, vw / size.w, Math.max(vh / size.h, 0.35 * vw / size.w));
    if (!whole) pz.s = Math.max(pz.s, Math.min(1, LEGIBLE_PT / smallestFont(svg)));
    pz.x = Math.max(0, (vw - size.w * pz.s) / 2);
    pz.y = 0;
    apply();
  }
  function zoomAt(factor, cx, cy) {
    var s = Math.min(8, Math.max(0.02, pz.s * factor));
    pz.x = cx - (cx - pz.x) * (s / pz.s);
    pz.y = cy - (cy - pz.y) * (s / pz.s);
    pz.s = s;
    apply();
  }
  function centreOn(el) {
    var r = el.getBoundingClientRect(), vr = viewport.getBoundingClientRect();
    if (r.width * 4 < 60 || pz.s < 0.5) {  // too small to read: zoom in around it first
      var f = Math.min(8, 1 / pz.s);
      zoomAt(f, r.left + r.width / 2 - vr.left, r.top + r.height / 2 - vr.top);
      r = el.getBoundingClientRect();
    }
    pz.x += vr.left + vr.width / 2 - (r.left + r.width / 2);
    pz.y += vr.top + vr.height / 2 - (r.top + r.height / 2);
    apply();
  }
  function reveal(el) {
    viewport.scrollTop = 0; viewport.scrollLeft = 0;  // focus may scroll the clipped viewport: pan instead
    var r = el.getBoundingClientRect(), vr = viewport.getBoundingClientRect();
    if (r.left >= vr.left && r.right <= vr.right && r.top >= vr.top && r.bottom <= vr.bottom) return;
    pz.x += vr.left + vr.width / 2 - (r.left + r.width / 2);
    pz.y += vr.top + vr.height / 2 - (r.top + r.height / 2);
    apply();
  }
  // Enter or Space on a focused box: open what it opens (a block or repeat in place, a layer, a
  // fusion), else select it.
  function activate(box) {
    var w = viewOpeningBlock(state.view, box.id);
    if (w >= 0) { openBlock(w, box.id, true); return; }
    var si = scopeBox(state.view, box.id);
    if (si >= 0) { if (!openScope(si)) selectScope(si, { el: box.el }); return; }
    var g = primary(state.view, box.id);
    if (g >= 0 && !expand(g)) select(g, { el: box.el });
  }
  function initPanZoom() {
    var drag = null;
    viewport.addEventListener("wheel", function (e) {
      e.preventDefault();
      var vr = viewport.getBoundingClientRect();
      zoomAt(Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)), e.clientX - vr.left, e.clientY - vr.top);
    }, { passive: false });
    viewport.addEventListener("pointerdown", function (e) {
      if (e.button !== 0) return;
      drag = { x: e.clientX, y: e.clientY, px: pz.x, py: pz.y, moved: false };
    });
    window.addEventListener("pointermove", function (e) {
      if (!drag) return;
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) return;
      drag.moved = true;
      viewport.classList.add("hv-dragging");
      pz.x = drag.px + dx; pz.y = drag.py + dy; apply();
    });
    window.addEventListener("pointerup", function () {
      if (drag && drag.moved) viewport.setAttribute("data-dragged", "1");
      drag = null;
      viewport.classList.remove("hv-dragging");
    });
    viewport.addEventListener("focusin", function (e) {
      var box = e.target !== viewport ? boxOf(e.target) : null;
      if (box) reveal(box.el);
    });
    viewport.addEventListener("keydown", function (e) {
      var box = e.target !== viewport ? boxOf(e.target) : null;
      if (box && (e.key === "Enter" || e.key === " ")) { e.preventDefault(); activate(box); return; }
      var step = 60, vr = viewport.getBoundingClientRect(), used = true;
      if (e.key === "+" || e.key === "=") zoomAt(1.25, vr.width / 2, vr.height / 2);
      else if (e.key === "-" || e.key === "_") zoomAt(0.8, vr.width / 2, vr.height / 2);
      else if (e.key === "0") fit(true);
      else if (e.key === "ArrowLeft") { pz.x += step; apply(); }
      else if (e.key === "ArrowRight") { pz.x -= step; apply(); }
      else if (e.key === "ArrowUp") { pz.y += step; apply(); }
      else if (e.key === "ArrowDown") { pz.y -= step; apply(); }
      else if (e.key === "Enter" && state.sel !== null) expand(state.sel);
      else if (e.key === "Enter" && state.selScope !== null) openScope(state.selScope);
      else if (e.key === "Escape" || e.key === "Backspace") collapse();
      else used = false;
      if (used) e.preventDefault();
    });
    root.querySelectorAll("[data-zoom]").forEach(function (b) {
      b.addEventListener("click", function () {
        var how = b.getAttribute("data-zoom");
        if (how === "fit") fit(true);
        else zoomAt(how === "in" ? 1.25 : 0.8, viewport.clientWidth / 2, viewport.clientHeight / 2);
      });
    });
  }

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
      if (si >= 0) { openScope(si); return; }
      var g = primary(state.view, box.id);
      if (g >= 0) expand(g);
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
    if (target < 0) target = indexView(state.view).byInst.has(g) ? state.view : 0;
    showView(target, function () { select(g, { centre: true }); });
  }

  // ---- the side panel --------------------------------------------------------------------------
  var panelEl = doc.getElementById("hv-panel");
  function el(tag, text, cls) {
    var e = doc.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }
  function linkTo(g, text) {
    var b = el("button", text || inst(g).name, "hv-link");
    b.type = "button";
    b.addEventListener("click", function () { jump(g); });
    b.addEventListener("mouseenter", function () { hover(g); });
    b.addEventListener("mouseleave", function () { hover(null); });
    return b;
  }
  function facts(pairs) {
    var dl = el("dl");
    pairs.forEach(function (p) {
      if (p[1] === "" || p[1] === null || p[1] === undefined) return;
      dl.appendChild(el("dt", p[0]));
      var dd = el("dd");
      if (typeof p[1] === "object") dd.appendChild(p[1]); else dd.textContent = String(p[1]);
      dl.appendChild(dd);
    });
    return dl;
  }
  function human(n, unit) {
    var steps = unit === "B" ? [[1 << 30, " GiB"], [1 << 20, " MiB"], [1 << 10, " KiB"]] : [[1e9, " G"], [1e6, " M"], [1e3, " k"]];
    for (var i = 0; i < steps.length; i++) if (n >= steps[i][0]) return (n / steps[i][0]).toFixed(1) + steps[i][1] + (unit === "B" ? "" : unit);
    return n + (unit === "B" ? " B" : " " + unit);
  }
  function list(items, limit, make) {
    var ul = el("ul");
    items.slice(0, limit).forEach(function (x) { var li = el("li"); li.appendChild(make(x)); ul.appendChild(li); });
    if (items.length > limit) ul.appendChild(el("li", "\u2026 " + (items.length - limit) + " more", "hv-panel-dim"));
    return ul;
  }
  function hloText(g, pre) {
    block("hv-texts").then(function (texts) {
      var i = inst(g);
      var lines = [texts[g]];
      if (i.calls >= 0) {  // a fusion: its body too
        lines.push("", "// " + i.side.comps[i.calls]);
        for (var k = 0; k < i.side.count; k++) if (i.side.comp[k] === i.calls) lines.push("  " + texts[i.side.offset + k]);
      }
      pre.textContent = lines.join("\n");
    });
  }
  function panel(g) {
    var i = inst(g), L = buildLinks();
    panelEl.hidden = false;
    panelEl.textContent = "";
    panelEl.appendChild(el("h3", i.name));
    panelEl.appendChild(facts([["side", i.side.label], ["opcode", i.opcode], ["shape", i.shape], ["op_name", i.opName],
                               ["layer", i.side.sc[g - i.side.offset] >= 0 ? scopeLink(i.side.sc[g - i.side.offset]) : ""],
                               ["your code", i.src], ["computation", i.comp]]));
    var actions = el("p", null, "hv-actions");
    if (viewOpening(g) >= 0 || (ownerOf(g) >= 0 && viewOpening(ownerOf(g)) >= 0 && views[state.view].opens !== "i:" + i.side.key + ":" + inst(ownerOf(g)).name)) {
      var open = el("button", i.calls >= 0 ? "open this fusion" : "open its fusion");
      open.type = "button";
      open.addEventListener("click", function () { expand(g); });
      actions.appendChild(open);
    }
    var upTo = parentOf(state.view);
    if (upTo >= 0) {
      var up = el("button", "back to " + (upTo === 0 ? "whole module" : views[upTo].title));
      up.type = "button";
      up.addEventListener("click", collapse);
      actions.appendChild(up);
    }
    if (actions.childNodes.length) panelEl.appendChild(actions);
    panelEl.appendChild(el("h4", i.calls >= 0 ? "HLO (with the fusion body)" : "HLO"));
    var pre = el("pre", "\u2026");
    panelEl.appendChild(pre);
    hloText(g, pre);
    var ks = kernelsOf(g);
    ks.slice(0, 8).forEach(function (kid) { panelEl.appendChild(kernelSection(kid, g)); });
    if (ks.length > 8) panelEl.appendChild(el("p", "\u2026 and " + (ks.length - 8) + " more kernels", "hv-panel-dim"));
    if (i.s === 0 && base === 2 && D.opk !== undefined && !ks.length) {
      var f = L.foldOfPre[g];
      if (f !== undefined) {
        panelEl.appendChild(el("h4", "folded by " + (D.folds[f].by === "tensorflow" ? "TensorFlow" : "XLA")));
        panelEl.appendChild(foldLine(f));
      } else if (i.opName) {
        panelEl.appendChild(el("p", "No kernel holds this op's work: it left no trace after optimization (eliminated).", "hv-panel-dim"));
      }
    }
    if (L.foldOfPost[g] !== undefined) {
      panelEl.appendChild(el("h4", "a folded constant"));
      panelEl.appendChild(foldLine(L.foldOfPost[g]));
    }
    passPanel(g);
    var p = L.pair[g] || (ks.length ? L.pair[D.kernels[ks[0]].inst] : null);
    if (p) {
      var other = p[0] === g || (ks.length && p[0] === D.kernels[ks[0]].inst) ? p[1] : p[0];
      panelEl.appendChild(el("h4", "matched in the other module (" + p[2] + ")"));
      panelEl.appendChild(linkTo(other, inst(other).name + " \u00b7 " + inst(other).side.label));
    }
  }
  function foldLine(f) {
    var fold = D.folds[f], box = el("div");
    box.appendChild(facts([["constant", fold.inst >= 0 ? linkTo(fold.inst, fold.constant) : fold.constant],
                           ["value", fold.value], ["shape", fold.shape]]));
    box.appendChild(el("p", "from " + fold.from.length + " op" + (fold.from.length === 1 ? "" : "s") + ":", "hv-panel-dim"));
    box.appendChild(list(fold.pre, 12, function (x) { return linkTo(x, inst(x).name + " \u00b7 " + inst(x).opName); }));
    return box;
  }
  function kernelSection(kid, g) {
    var k = D.kernels[kid], L = buildLinks(), box = el("section");
    box.appendChild(el("h4", "kernel #" + k.number + " \u00b7 " + k.name));
    var layers = el("span");
    (k.layers || []).forEach(function (si, n) {
      if (n) layers.appendChild(doc.createTextNode(", "));
      layers.appendChild(scopeLink(si));
    });
    box.appendChild(facts([["what", k.what], ["layers", (k.layers || []).length ? layers : "none (no op name, and none its data flow names)"], ["instructions", k.instructions], ["ops", k.ops], ["bytes", human(k.read, "B") + " read, " + human(k.written, "B") + " written"],
                           ["FLOPs (estimate)", human(k.flops, "")], ["your code", k.sources.join(", ")]]));
    if (k.inst !== g) box.appendChild(linkTo(k.inst, "show the kernel " + k.name));
    var pre = L.kernelPre[kid] || [];
    if (pre.length) {
      var ops = [], seen = new Set();
      pre.forEach(function (x) { var o = inst(x).opName; if (!seen.has(o)) { seen.add(o); ops.push(x); } });
      box.appendChild(el("p", "its work came from " + ops.length + " op" + (ops.length === 1 ? "" : "s") + " before optimization:", "hv-panel-dim"));
      box.appendChild(list(ops, 24, function (x) { return linkTo(x, inst(x).opName + " (" + inst(x).name + ")"); }));
    }
    var folds = [];
    (D.folds || []).forEach(function (f, fi) {
      if (f.into.some(function (x) { return inst(x).kernel === kid; }) || (f.inst >= 0 && inst(f.inst).kernel === kid)) folds.push(fi);
    });
    if (folds.length) {
      box.appendChild(el("p", "constants folded into it:", "hv-panel-dim"));
      box.appendChild(list(folds, 12, function (fi) {
        var f = D.folds[fi];
        return linkTo(f.inst >= 0 ? f.inst : k.inst, f.constant + " = " + f.value + " (from " + f.from.length + " ops)");
      }));
    }
    return box;
  }

  // ---- the pass history: which of XLA's passes made a kernel or a folded constant -----------
  // D.passes (when the page holds one): every snapshot with its counts, the credits of the
  // optimized module's fusions and folded constants (as `hloviz passes --json` gives them), and
  // the snapshots drawn as sides of their own (after the page's own `base` sides).
  var credits = null;
  function passCredits() {
    if (credits || !D.passes) return credits;
    credits = { fusion: new Map(), folded: new Map(), step: new Map(), side: new Map() };
    D.passes.fusions.forEach(function (f) { credits.fusion.set(f.name, f); });
    D.passes.folded.forEach(function (f) { credits.folded.set(f.constant, f); });
    D.passes.steps.forEach(function (st) { credits.step.set(st.index, st); if (st.side) credits.side.set(st.side, st); });
    return credits;
  }
  function stepName(ref) {
    return ref.pass + (ref.during ? " (" + ref.during + ")" : "") + " (#" + ref.index + ")";
  }
  function stepButton(index, text, name) {
    var st = passCredits().step.get(index);
    if (!st || !st.view) return null;
    var b = el("button", text, "hv-link");
    b.type = "button";
    b.setAttribute("data-step", String(index));
    b.addEventListener("click", function () { openStep(index, name); });
    return b;
  }
  // Show the module after snapshot `index`; select `name` there when the snapshot has it.
  function openStep(index, name) {
    var st = passCredits().step.get(index), v = st && st.view ? viewByKey(st.view) : -1;
    if (v < 0) return false;
    if (v !== state.view) openedFrom[v] = state.view;
    showView(v, function () {
      var g = name ? find(st.side, name) : -1;
      if (g >= 0) select(g, { centre: true }); else writeHash();
    });
    return true;
  }
  function creditLine(what, ref, note, name) {
    var box = el("p", null, "hv-made");
    if (ref) {
      box.appendChild(doc.createTextNode(what + " " + stepName(ref) + ", pipeline " + (ref.pipeline || "\u2014") + " "));
      var b = stepButton(ref.index, "show the module after #" + ref.index, name);
      if (b) box.appendChild(b);
    } else {
      box.textContent = note || "the snapshots cannot tell which pass";
      box.classList.add("hv-panel-dim");
    }
    return box;
  }
  function passPanel(g) {
    var C = passCredits();
    if (!C) return;
    var i = inst(g), st = C.side.get(i.side.key), finalSide = i.side.key === D.passes.final;
    if (!finalSide && !st) return;
    // An instruction inside a kernel: the credit is its kernel's (the fusion holding it).
    var kernel = i.opcode === "fusion" ? g : (i.kernel >= 0 ? D.kernels[i.kernel].inst : ownerOf(g));
    var kname = kernel >= 0 ? inst(kernel).name : "", own = kernel === g;
    var f = kernel >= 0 ? C.fusion.get(kname) : undefined, c = C.folded.get(i.name);
    if (i.opcode === "constant" && c && (finalSide || (c.pass && c.pass.index <= st.index))) {
      panelEl.appendChild(el("h4", "the pass that wrote it"));
      panelEl.appendChild(creditLine("written by", c.pass, c.note, i.name));
    }
    var head = own ? "the pass that made it" : "the pass that made its kernel " + kname;
    if (f && (finalSide || (f.created_by && f.created_by.index <= st.index))) {
      panelEl.appendChild(el("h4", head));
      panelEl.appendChild(creditLine("made by", f.created_by, f.note, kname));
      if (f.clone_of) panelEl.appendChild(creditLine("a clone of " + f.clone_of.name + ", which was made by", f.clone_of.created_by, "", f.clone_of.name));
    } else if (st && kernel >= 0) {
      // A fusion of this snapshot that the optimized module no longer has: the last step up to
      // this one whose pass made a fusion of that name (the history's own "fusions created").
      var maker = null;
      D.passes.steps.forEach(function (x) { if (x.index <= st.index && x.made.indexOf(kname) >= 0) maker = x; });
      if (maker) {
        panelEl.appendChild(el("h4", head));
        panelEl.appendChild(creditLine(maker.index === st.index ? "made here, by" : "made by",
                                       { index: maker.index, pass: maker.pass, pipeline: maker.pipeline }, "", kname));
      }
    }
    if (st) panelEl.appendChild(el("p", "in the module after #" + st.index + " " + st.label + ": " + st.instructions +
                                   " instructions, " + st.fusions + " fusions", "hv-panel-dim"));
  }
  // The filmstrip's cards are links to #v=step:N (the URL fragment opens a view): mark the one on
  // screen, and bring the picture into sight when one is clicked.
  function filmMark() {
    var key = views[state.view] ? views[state.view].key : "top";
    doc.querySelectorAll(".hv-film a[data-view]").forEach(function (a) {
      if (a.getAttribute("data-view") === key) a.setAttribute("aria-current", "step"); else a.removeAttribute("aria-current");
    });
  }
  function initFilm() {
    doc.querySelectorAll(".hv-film a[data-view]").forEach(function (a) {
      a.addEventListener("click", function () { viewport.scrollIntoView({ block: "start" }); });
    });
    filmMark();
  }

  // ---- scopes (the model's layers, from op names) -------------------------------------------
  var under = {};
  function isUnder(si) {  // scope index -> Uint8Array marking si and every scope below it
    if (under[si]) return under[si];
    var P = D.scopes.parent, n = P.length, mark = new Uint8Array(n), known = new Int8Array(n);
    for (var j = 0; j < n; j++) {
      var chain = [], x = j, verdict = 0;
      while (x >= 0 && !known[x]) { if (x === si) { verdict = 1; break; } chain.push(x); x = P[x]; }
      if (!verdict && x >= 0 && known[x]) verdict = known[x] === 1 ? 1 : 0;
      if (verdict) { mark[j] = 1; chain.forEach(function (c) { mark[c] = 1; known[c] = 1; }); }
      else chain.forEach(function (c) { known[c] = -1; });
      known[j] = mark[j] ? 1 : -1;
    }
    mark[si] = 1;
    return (under[si] = mark);
  }
  function scopeMembers(si) {
    var mark = isUnder(si), out = [];
    sides.forEach(function (side) {
      for (var k = 0; k < side.count; k++) { var c = side.sc[k]; if (c >= 0 && mark[c]) out.push(side.offset + k); }
    });
    return out;
  }
  function scopeIndex(path) {
    var P = D.scopes.path;
    for (var i = 0; i < P.length; i++) if (P[i] === path) return i;
    return -1;
  }
  function lightScope(si, els) {
    var gs = scopeMembers(si), all = new Set();
    gs.forEach(function (g) { related(g).forEach(function (x) { all.add(x); }); });
    light(all, els || []);
    return gs;
  }
  // Which module a view draws: -1 for the page's own, else the pass history's snapshot (its side).
  function family(v) { var s = views[v] ? views[v].sides[0] : 0; return s >= base ? s : -1; }
  function viewOpeningScope(si) {
    var key = "s:" + D.scopes.path[si], first = -1, here = family(state.view);
    for (var v = 0; v < views.length; v++) {
      // a layer opens in the module on screen: a snapshot's layers are pictures of their own
      if (views[v].opens === key && family(v) === here) { first = v; break; }
    }
    return first;
  }
  function scopeLink(si) {
    var b = el("button", D.scopes.label[si] || D.scopes.path[si], "hv-link");
    b.type = "button";
    b.addEventListener("click", function () { selectScope(si, { centre: true }); });
    return b;
  }
  function selectScope(si, opts) {
    opts = opts || {};
    state.sel = null;
    state.selScope = si;
    var gs = lightScope(si, opts.el ? [opts.el] : []);
    if (opts.centre) {
      var idx = indexView(state.view), first = null;
      for (var i = 0; i < gs.length && !first; i++) { var id = idx.byInst.get(gs[i]); if (id !== undefined) first = idx.els.get(id); }
      if (first) centreOn(first);
    }
    panelEl.hidden = false;
    panelEl.textContent = "";
    panelEl.appendChild(el("h3", D.scopes.label[si] || D.scopes.path[si]));
    // its kernels: those whose layers (ScopeTree.layers_of, as stats --by scope counts them)
    // are this scope or below it; not every kernel holding one of its instructions (XLA merges
    // a constant across layers and keeps one layer's op name on every copy)
    var kernels = new Set(), perSide = sides.map(function () { return 0; }), mark = isUnder(si);
    var here = family(state.view);  // the module on screen: the page's own, or a snapshot
    gs.forEach(function (g) { perSide[sideOf(g)]++; });
    D.kernels.forEach(function (k, ki) {
      if ((here < 0 ? k.side < base : k.side === here) && (k.layers || []).some(function (l) { return mark[l]; })) kernels.add(ki);
    });
    var up = D.scopes.parent[si];
    panelEl.appendChild(facts([["scope", D.scopes.path[si]], ["phase", D.scopes.phase[si]],
                               ["inside", up >= 0 ? scopeLink(up) : "the whole module"]]
      .concat(sides.map(function (side, s) { return [side.label, perSide[s] + " instructions"]; }))
      .concat([["kernels", kernels.size]])));
    var actions = el("p", null, "hv-actions"), v = viewOpeningScope(si);
    if (v >= 0 && v !== state.view) {
      var open = el("button", "open this layer");
      open.type = "button";
      open.addEventListener("click", function () { openScope(si); });
      actions.appendChild(open);
    } else if (v < 0) {
      var host = -1;  // the nearest enclosing layer with a picture: it draws this one open
      for (var a = D.scopes.parent[si]; a >= 0 && host < 0; a = D.scopes.parent[a]) if (viewOpeningScope(a) >= 0) host = a;
      if (host >= 0 && viewOpeningScope(host) !== state.view) {
        panelEl.appendChild(el("p", "This layer is drawn open in the picture of " + (D.scopes.label[host] || D.scopes.path[host]) + ":", "hv-panel-dim"));
        var openHost = el("button", "open " + (D.scopes.label[host] || D.scopes.path[host]));
        openHost.type = "button";
        openHost.addEventListener("click", function () { openScope(host); });
        actions.appendChild(openHost);
      } else if (host < 0) {
        panelEl.appendChild(el("p", "This layer has no picture of its own in this page: the page holds at most 48 layer pictures, " +
                                "8 MiB of SVG, and what the --timeout left after the main pictures (hloviz show --timeout 120 gives more); " +
                                "its boxes are lit in the picture, and `hloviz render --scope " + D.scopes.path[si] + "` draws it.", "hv-panel-dim"));
      }
    }
    if (parentOf(state.view) >= 0) {
      var back = el("button", "back up");
      back.type = "button";
      back.addEventListener("click", collapse);
      actions.appendChild(back);
    }
    if (actions.childNodes.length) panelEl.appendChild(actions);
    if (kernels.size) {
      panelEl.appendChild(el("h4", "its kernels"));
      panelEl.appendChild(list(Array.from(kernels).sort(function (a, b) { return a - b; }), 40, function (k) {
        return linkTo(D.kernels[k].inst, "#" + D.kernels[k].number + " " + D.kernels[k].name + " \u00b7 " + D.kernels[k].what);
      }));
    }
    panelEl.appendChild(el("h4", "its instructions"));
    panelEl.appendChild(list(gs, 60, function (g) { var i = inst(g); return linkTo(g, i.name + " \u00b7 " + i.opcode + " \u00b7 " + i.side.label); }));
    if (!opts.keepHash) writeHash();
  }
  function openScope(si) {
    var v = viewOpeningScope(si);
    if (v < 0) return false;
    showView(v, function () { selectScope(si, { keepHash: false }); });
    return true;
  }

  // ---- search ------------------------------------------------------------------------------
  var lower = null, names = null;
  function search(q) {
    q = q.trim().toLowerCase();
    var results = [];
    if (!q) return results;
    if (!lower) lower = S.map(function (s) { return s.toLowerCase(); });
    var hit = new Uint8Array(S.length);
    for (var i = 0; i < lower.length; i++) if (lower[i].indexOf(q) >= 0) hit[i] = 1;
    var SP = D.scopes.path, SL = D.scopes.label;
    for (var si = 0; si < SP.length && results.length < 30; si++) {
      if (SP[si].toLowerCase().indexOf(q) >= 0 || SL[si].toLowerCase().indexOf(q) >= 0) results.push({ kind: "scope", si: si });
    }
    D.kernels.forEach(function (k, kid) {
      if (results.length < 60 && (k.name.toLowerCase() === q || ("#" + k.number) === q)) results.push({ kind: "kernel", g: k.inst, kid: kid });
    });
    if (!names) names = sides.map(function (side) { return side.name.map(function (n) { return n.toLowerCase(); }); });
    var exact = [], rest = [], limit = 200;
    sides.forEach(function (side, s) {
      var nm = names[s];
      for (var k = 0; k < side.count && exact.length + rest.length < 5000; k++) {
        var n = nm[k];
        if (n === q) exact.push(side.offset + k);
        else if (n.indexOf(q) >= 0 || (side.op[k] >= 0 && hit[side.op[k]]) ||
                 (side.opn[k] >= 0 && hit[side.opn[k]]) || (side.src[k] >= 0 && hit[side.src[k]])) rest.push(side.offset + k);
      }
    });
    exact.concat(rest).slice(0, limit).forEach(function (g) { results.push({ kind: "instruction", g: g }); });
    results.more = Math.max(0, exact.length + rest.length - limit);
    return results;
  }
  function showResults(results, q) {
    var ol = doc.getElementById("hv-results");
    ol.setAttribute("data-query", q);
    ol.textContent = "";
    if (!q.trim()) { ol.hidden = true; return; }
    ol.hidden = false;
    if (!results.length) { ol.appendChild(el("li", "nothing matches \u201c" + q.trim() + "\u201d", "hv-dim")); return; }
    results.forEach(function (r) {
      var li = el("li"), b = el("button");
      b.type = "button";
      if (r.kind === "scope") {
        b.appendChild(el("span", "layer", "hv-kind"));
        b.appendChild(doc.createTextNode(D.scopes.label[r.si] + " "));
        var n = scopeMembers(r.si).length;
        b.appendChild(el("span", n + " instruction" + (n === 1 ? "" : "s") + (D.scopes.phase[r.si] ? " \u00b7 " + D.scopes.phase[r.si] : ""), "hv-dim"));
        b.addEventListener("click", function () { ol.hidden = true; if (!openScope(r.si)) selectScope(r.si, { centre: true }); });
        b.setAttribute("data-scope", D.scopes.path[r.si]);
        if (viewOpeningScope(r.si) >= 0) { b.setAttribute("data-opens", "1"); b.appendChild(el("span", " \u00b7 has its own picture", "hv-dim")); }
      } else {
        var i = inst(r.g);
        b.appendChild(el("span", r.kind === "kernel" ? "kernel" : i.opcode, "hv-kind"));
        b.appendChild(doc.createTextNode(i.name + " "));
        b.appendChild(el("span", [i.side.label, i.opName, i.src].filter(Boolean).join(" \u00b7 "), "hv-dim"));
        b.addEventListener("click", function () { jump(r.g); ol.hidden = true; });
        b.setAttribute("data-g", String(r.g));
      }
      b.addEventListener("keydown", function (e) {
        if (e.key === "ArrowDown" && li.nextSibling) { e.preventDefault(); li.nextSibling.querySelector("button").focus(); }
        if (e.key === "ArrowUp") { e.preventDefault(); (li.previousSibling ? li.previousSibling.querySelector("button") : doc.getElementById("hv-search")).focus(); }
      });
      li.appendChild(b);
      ol.appendChild(li);
    });
    if (results.more) ol.appendChild(el("li", "\u2026 " + results.more + " more; type more of the name", "hv-dim"));
  }
  function initSearch() {
    var input = doc.getElementById("hv-search"), timer = null;
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(function () {
        var t0 = performance.now(), found = search(input.value);
        showResults(found, input.value);
        doc.getElementById("hv-results").setAttribute("data-ms", (performance.now() - t0).toFixed(1));
      }, 60);
    });
    input.addEventListener("focus", function () { if (input.value.trim()) doc.getElementById("hv-results").hidden = false; });
    input.addEventListener("keydown", function (e) {
      var first = doc.querySelector("#hv-results button");
      if (e.key === "Enter") { clearTimeout(timer); showResults(search(input.value), input.value); first = doc.querySelector("#hv-results button"); if (first) first.click(); }
      if (e.key === "ArrowDown" && first) { e.preventDefault(); first.focus(); }
    });
  }

  // ---- tables: sort, filter, link ---------------------------------------------------------------
  function initTables() {
    doc.querySelectorAll("input.hv-filter").forEach(function (input) {
      var table = doc.getElementById(input.getAttribute("data-table"));
      if (!table) return;
      input.addEventListener("input", function () {
        var q = input.value.trim().toLowerCase();
        table.querySelectorAll("tbody tr").forEach(function (tr) { tr.hidden = q !== "" && tr.textContent.toLowerCase().indexOf(q) < 0; });
      });
    });
    memoryTables();
    ["hv-kernels", "hv-folds", "hv-buffers", "hv-layers"].forEach(function (id) {
      var table = doc.getElementById(id);
      if (!table) return;
      table.querySelectorAll("thead th").forEach(function (th, col) {
        th.addEventListener("click", function () {
          var asc = !th.classList.contains("hv-asc");
          table.querySelectorAll("thead th").forEach(function (h) { h.classList.remove("hv-asc", "hv-desc"); });
          th.classList.add(asc ? "hv-asc" : "hv-desc");
          var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
          var num = th.hasAttribute("data-sort");
          rows.sort(function (a, b) {
            var x = a.cells[col], y = b.cells[col], r;
            if (num) r = parseFloat(x.getAttribute("data-v") || x.textContent) - parseFloat(y.getAttribute("data-v") || y.textContent);
            else r = x.textContent.localeCompare(y.textContent);
            return asc ? r : -r;
          });
          rows.forEach(function (r) { body.appendChild(r); });
        });
      });
      table.addEventListener("mouseover", function (e) {
        var tr = e.target.closest("tr[data-kernel]");
        if (!tr || !D) return;
        var g = find("", tr.getAttribute("data-kernel"));
        var k = g >= 0 ? inst(g).kernel : -1;
        if (k >= 0) hover(D.kernels[k].inst);
      });
      table.addEventListener("mouseleave", function () { if (D) hover(null); });
    });
  }

  // The memory section: a buffer lights its producer and its last user; a layer, its buffers live at
  // the peak (the row itself says its share of the peak).
  function memoryTables() {
    function pick(tr, names) {
      if (!D) return;
      var gs = names.map(function (n) { return n ? (find("post", n) >= 0 ? find("post", n) : find("", n)) : -1; })
                    .filter(function (g) { return g >= 0; });
      doc.querySelectorAll("#hv-buffers tbody tr, #hv-layers tbody tr").forEach(function (r) {
        r.classList.toggle("hv-row-sel", r === tr);
      });
      light(gs, []);
    }
    var buffers = doc.getElementById("hv-buffers"), layers = doc.getElementById("hv-layers");
    if (buffers) buffers.addEventListener("click", function (e) {
      var tr = e.target.closest("tr[data-inst]");
      if (tr) pick(tr, [tr.getAttribute("data-inst"), tr.getAttribute("data-user")]);
    });
    if (layers) layers.addEventListener("click", function (e) {
      var tr = e.target.closest("tr[data-insts]");
      if (tr) pick(tr, tr.getAttribute("data-insts").split(" "));
    });
  }

  // ---- the URL fragment keeps the selection ------------------------------------------------------
  var writing = false;
  function writeHash() {
    var parts = [];
    if (state.view) parts.push("v=" + encodeURIComponent(views[state.view].key));
    if (state.sel !== null) { var i = inst(state.sel); parts.push("i=" + encodeURIComponent(i.side.key + ":" + i.name)); }
    else if (state.selScope !== null && state.selScope !== undefined) parts.push("s=" + encodeURIComponent(D.scopes.path[state.selScope]));
    var h = parts.length ? "#" + parts.join("&") : "";
    if (h === location.hash || (!h && !location.hash)) return;
    writing = true;
    history.replaceState(null, "", h || location.pathname + location.search);
    writing = false;
  }
  function readHash() {
    if (writing) return;
    var h = location.hash.replace(/^#/, ""), p = {};
    h.split("&").forEach(function (kv) {
      var at = kv.indexOf("=");
      if (at > 0) { try { p[kv.slice(0, at)] = decodeURIComponent(kv.slice(at + 1)); } catch (e) { /* not ours */ } }
    });
    var v = p.v ? viewByKey(p.v) : 0;
    if (v < 0) v = 0;
    var g = -1;
    if (p.i) { var at = p.i.indexOf(":"); g = find(p.i.slice(0, at), p.i.slice(at + 1)); }
    else if (p.k) g = find(base === 2 && !D.pairs.length ? sides[1].key : "", p.k);
    else if (p.c) g = find(sides[base - 1].key, p.c);
    if (p.k || p.c) {
      if (g >= 0) { viewport.scrollIntoView({ block: "start" }); jump(g); }
      return;
    }
    showView(v, function () {
      if (g >= 0) select(g, { centre: true, keepHash: true });
      else if (p.s && scopeIndex(p.s) >= 0) selectScope(scopeIndex(p.s), { centre: true, keepHash: true });
    });
  }

  // ---- a small read-only API for scripts and tests: what is selected and lit, by name --------
  function describe(g) { var i = inst(g); return { side: i.side.key, name: i.name, opcode: i.opcode, opName: i.opName }; }
  function api() {
    return {
      view: function () { return views[state.view].key; },
      pair: function () { return views[state.view].pair || null; },  // what the other column opened with this view
      selected: function () {
        if (state.sel !== null) return { instruction: describe(state.sel) };
        if (state.selScope !== null) return { scope: D.scopes.path[state.selScope] };
        return null;
      },
      boxes: function () {  // the boxes of the current picture: the layer each stands for, the view each opens
        var v = state.view, info = views[v];
        return Object.keys(info.nodes).concat(Object.keys(info.clusters)).map(function (id) {
          var si = scopeBox(v, id), g = si >= 0 ? -1 : primary(v, id), w = viewOpeningBlock(v, id);
          var to = w >= 0 ? w : si >= 0 ? viewOpeningScope(si) : (g >= 0 ? viewOpening(g) : -1);
          // an instruction of a fusion drawn open: a double-click opens that fusion (expand)
          if (to < 0 && g >= 0 && ownerOf(g) >= 0) to = viewOpening(ownerOf(g));
          var gs = info.nodes[id] ? info.nodes[id][1] : [];
          return { id: id, scope: si >= 0 ? D.scopes.path[si] : null, opens: to >= 0 && to !== v ? views[to].key : null,
                   members: gs.map(describe) };
        });
      },
      highlighted: function () {  // the lit boxes of the current picture, each with what it holds
        var info = views[state.view];
        return lit.filter(function (e) { return e.classList.contains("hv-hl"); }).map(function (e) {
          var id = e.getAttribute("data-box"), n = info.nodes[id], c = info.clusters[id];
          var gs = n ? n[1] : (c && c[1] >= 0 ? [c[1]] : []);
          return { id: id, side: sides[views[state.view].sides[n ? n[0] : c[0]]].key, members: gs.map(describe) };
        });
      }
    };
  }

  // ---- start ------------------------------------------------------------------------------
  function start(data) {
    performance.mark("hv-data-decoded");
    D = data; S = D.strings; sides = D.sides; views = D.views;
    base = D.base !== undefined ? D.base : sides.length;
    sides.forEach(function (side) { total += side.count; });
    var svg = viewport.querySelector("svg");
    viewEls[0] = svg;
    prepare(svg);
    focusable(0, svg);
    performance.mark("hv-prepared");
    fit();
    performance.mark("hv-fitted");
    crumbs();
    initPanZoom();
    initClicks();
    initSearch();
    initTables();
    initFilm();
    window.addEventListener("hashchange", readHash);
    if (location.hash) readHash();
    window.hloviz = api();
    root.setAttribute("data-ready", String(Math.round(performance.now())));  // ms since navigation (benchmarks read it)
    var idle = window.requestIdleCallback || function (f) { return setTimeout(f, 200); };
    idle(function () { block("hv-texts"); block("hv-svgs"); });
  }
  if (root && viewport && viewport.querySelector("svg")) {
    performance.mark("hv-script");
    block("hv-data").then(start).catch(function (e) {
      root.setAttribute("data-error", String(e));
      var note = doc.getElementById("hv-results");
      note.hidden = false;
      note.textContent = "The explorer could not read its data: " + e;
    });
  }
})();
