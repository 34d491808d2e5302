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
    if (si >= 0) { if (!openScope(si)) { selectScope(si, { el: box.el }); notServed(box.id); } return; }
    var g = primary(state.view, box.id);
    if (g >= 0 && !expand(g)) { select(g, { el: box.el }); notServed(box.id); }
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

