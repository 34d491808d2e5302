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

