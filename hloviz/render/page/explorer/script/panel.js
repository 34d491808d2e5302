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

