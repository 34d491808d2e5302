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

