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
    if (views[v].lazy) return drawnOnDemand(v).then(function (text) { return made(v, text); });
    return block("hv-svgs").then(function (svgs) { return made(v, svgs[v]); });
  }
  function made(v, text) {
    var holder = doc.createElement("div");
    holder.innerHTML = text;  // Graphviz's own SVG output, made by hloviz (when the page was written, or served)
    var svg = holder.querySelector("svg");
    prepare(svg);
    focusable(v, svg);
    viewEls[v] = svg;
    return svg;
  }
  // A view the page offers but hloviz has not drawn yet (a placeholder, "lazy"): the server that
  // serves the page (hloviz show --open) draws it; its boxes fill the placeholder, and what it
  // opens in turn joins the views as placeholders of their own.
  var asked = {};
  function drawnOnDemand(v) {
    var key = views[v].key;
    if (asked[key]) return asked[key];
    asked[key] = fetch("view?key=" + encodeURIComponent(key)).then(function (r) {
      return r.json().then(function (body) {
        if (!r.ok) throw new Error(body.error || "the server answered " + r.status);
        return body;
      });
    }).then(function (body) {
      var svg = body.view.svg;
      delete body.view.svg;
      Object.keys(body.view).forEach(function (k) { views[v][k] = body.view[k]; });
      delete views[v].lazy;
      (body.more || []).forEach(function (m) { if (viewByKey(m.key) < 0) views.push(m); });
      return svg;
    });
    asked[key].catch(function () { delete asked[key]; });  // a failed drawing may be asked again
    return asked[key];
  }
  function say(text) {
    var status = doc.getElementById("hv-status");
    if (!status) return;
    status.textContent = text;
    status.hidden = !text;
  }
  function showView(v, then) {
    if (views[v].lazy) say("drawing " + views[v].title + "\u2026");
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
    }, function (e) {
      say("could not draw " + views[v].title + ": " + (e && e.message ? e.message : e));
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

