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

