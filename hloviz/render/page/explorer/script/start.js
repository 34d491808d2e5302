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
    // Placeholders (views drawn on demand) come last; only a page hloviz serves can draw them.
    if (!doc.querySelector('meta[name="hloviz-server"]')) {
      views.forEach(function (v) { if (v.lazy) undrawn.add(v.opens); });
      views = views.filter(function (v) { return !v.lazy; });
    }
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
