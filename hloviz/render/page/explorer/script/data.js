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
  var undrawn = new Set();  // what the views drawn on demand open, which this page opened as a file cannot draw

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

