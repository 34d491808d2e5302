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

