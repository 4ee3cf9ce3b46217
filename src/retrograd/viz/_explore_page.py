"""The HTML, CSS and JavaScript of ``explore``'s page (inlined into every page it writes: the
page must work offline, from a file, with nothing fetched)."""

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{TITLE}}</title>
<style>
{{CSS}}
</style>
</head>
<body>
<header>
  <h1>{{TITLE}}</h1>
  <nav id="beats" aria-label="beats of the graph's life">
    <button type="button" id="prev" title="previous beat (left arrow)" aria-label="previous beat">&#9664;</button>
    <span id="beat-buttons"></span>
    <button type="button" id="next" title="next beat (right arrow)" aria-label="next beat">&#9654;</button>
    <input type="range" id="beat-slider" min="1" max="1" step="1" value="1" aria-label="beat">
  </nav>
  <button type="button" id="fit" aria-pressed="true" title="fit the drawing to the window, or show it at its own size">fit to window</button>
</header>
<div id="status">
  <div id="caption"></div>
  <pre id="error" hidden></pre>
</div>
<main>
  <section id="view">
{{DRAWINGS}}
  </section>
  <aside id="panel">
    <div id="panel-body"></div>
    <div id="legend">
      <div><span class="swatch node"></span>backward node</div>
      <div><span class="swatch leaf"></span>leaf tensor</div>
      <div><span class="swatch output"></span>output</div>
      <div><span class="swatch released"></span>released by backward</div>
      <div><svg width="34" height="10"><line x1="2" y1="5" x2="32" y2="5" class="fwd-line"/></svg>forward</div>
      <div><svg width="34" height="10"><line x1="2" y1="5" x2="32" y2="5" class="grad-line"/></svg>gradient flowed back</div>
      <div class="keys">&larr; &rarr; step the beats &middot; Esc clears the selection</div>
    </div>
  </aside>
</main>
<svg width="0" height="0" style="position:absolute" aria-hidden="true">
  <defs>
    <marker id="grad-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7"
            orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#c0392b"/></marker>
  </defs>
</svg>
<script type="application/json" id="graph-data">{{DATA}}</script>
<script>
{{JS}}
</script>
</body>
</html>
"""

CSS = """
:root { --panel: 380px; --accent: #1f6feb; --grad: #c0392b; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html, body { margin: 0; height: 100%; }
body { font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f; background: #fafafa;
       display: flex; flex-direction: column; }
header { display: flex; align-items: center; gap: 16px; padding: 8px 16px; background: #fff;
         border-bottom: 1px solid #ddd; flex-wrap: wrap; }
h1 { font-size: 16px; margin: 0; font-weight: 600; }
nav { display: flex; align-items: center; gap: 6px; flex-wrap: wrap; }
nav button, #fit { font: inherit; padding: 4px 10px; border: 1px solid #bbb; border-radius: 6px; background: #f4f4f4;
             cursor: pointer; }
nav button:hover, #fit:hover { background: #e9e9e9; }
#fit { margin-left: auto; }
#fit[aria-pressed="true"] { background: #dbe9ff; border-color: #8bb4f0; color: #174ea6; }
nav button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: #fff; }
nav button:disabled { opacity: .4; cursor: default; }
#beat-slider { width: 110px; }
#status { padding: 8px 16px 0; }
#caption { color: #444; }
#error { margin: 8px 0 0; padding: 8px 12px; background: #fdecea; border: 1px solid #f5b7b1; border-radius: 6px;
         color: #922b21; white-space: pre-wrap; font: 12px/1.4 ui-monospace, monospace; }
main { flex: 1; display: grid; grid-template-columns: minmax(0, 1fr) var(--panel); min-height: 0; }
#view { overflow: auto; padding: 12px; display: flex; min-height: 0; }
.drawing { flex: 1; min-height: 0; display: flex; justify-content: center; align-items: flex-start; }
.drawing svg { max-width: 100%; max-height: 100%; width: auto; height: auto; display: block; }
#view.actual .drawing svg { max-width: none; max-height: none; }
#panel { border-left: 1px solid #ddd; background: #fff; overflow: auto; padding: 12px 14px;
         display: flex; flex-direction: column; justify-content: space-between; gap: 16px; }
#panel h2 { font: 600 16px ui-monospace, monospace; margin: 0 0 2px; word-break: break-all; }
#panel h3 { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: #666; margin: 14px 0 4px; }
#panel .sub { color: #555; }
#panel .hint { color: #777; }
#panel .badge { display: inline-block; font-size: 11px; padding: 1px 6px; border-radius: 9px; margin-left: 4px;
                background: #eee; color: #444; vertical-align: middle; }
#panel .badge.freed { background: #f0f0f0; color: #888; border: 1px dashed #aaa; }
#panel .badge.raised { background: #fdecea; color: #922b21; border: 1px solid #f5b7b1; }
#panel .badge.held { background: #ffe0b2; color: #8a4b00; }
#panel table { border-collapse: collapse; width: 100%; font-size: 12px; }
#panel th { text-align: left; color: #666; font-weight: 500; border-bottom: 1px solid #e5e5e5; padding: 2px 4px; }
#panel td { border-bottom: 1px solid #f0f0f0; padding: 3px 4px; vertical-align: top; font-family: ui-monospace, monospace; }
#panel td.freed { color: #999; }
#panel .preview { font: 12px ui-monospace, monospace; background: #f6f8fa; border-radius: 4px; padding: 4px 6px;
                  overflow-wrap: anywhere; margin: 2px 0; }
#legend { font-size: 12px; color: #555; border-top: 1px solid #eee; padding-top: 8px;
          display: grid; grid-template-columns: 1fr 1fr; gap: 3px 10px; }
#legend div { display: flex; align-items: center; gap: 6px; }
#legend .keys { grid-column: 1 / -1; color: #888; }
.swatch { width: 18px; height: 11px; border-radius: 3px; border: 1px solid #888; display: inline-block; }
.swatch.node { background: #e4e4e4; } .swatch.leaf { background: #add8e6; } .swatch.output { background: #caff70; }
.swatch.released { background: #f6f6f6; border: 1px dashed #aaa; }
.fwd-line { stroke: #555; stroke-width: 1.5; }
.grad-line { stroke: var(--grad); stroke-width: 1.5; stroke-dasharray: 5 3; }
/* the drawing: Graphviz's SVG, restyled per beat by class */
.drawing g.node { cursor: pointer; outline: none; }
.drawing g.node:focus-visible path, .drawing g.node:focus-visible polygon { stroke: var(--accent); stroke-width: 2.2; }
.drawing g.node:hover path, .drawing g.node:hover polygon { stroke-width: 2.2; }
.drawing g.node text { transition: fill .25s; }
.drawing g.node path, .drawing g.node polygon { transition: fill .25s, stroke .25s; }
.drawing g.node.released path, .drawing g.node.released polygon { fill: #f3f3f3; stroke: #a8a8a8; stroke-dasharray: 4 3; }
.drawing g.node.released text { fill: #858585; }
.drawing g.node.raised path, .drawing g.node.raised polygon { stroke: var(--grad); stroke-width: 2.5; stroke-dasharray: none; }
.drawing g.node.selected path, .drawing g.node.selected polygon { stroke: var(--accent); stroke-width: 3; stroke-dasharray: none; }
.drawing g.edge.grad path { stroke: var(--grad); stroke-dasharray: 6 4; marker-start: url(#grad-arrow); }
.drawing g.edge.grad polygon { display: none; }
"""

JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("graph-data").textContent);
  var beats = data.beats;
  var current = -1;
  var selected = null;
  var drawings = Array.prototype.slice.call(document.querySelectorAll(".drawing"));
  var view = document.getElementById("view");
  var panel = document.getElementById("panel-body");
  var slider = document.getElementById("beat-slider");
  var buttons = document.getElementById("beat-buttons");

  // Tag every drawn node with its page id and kind (Graphviz wrote ids "g<graph><id>").
  drawings.forEach(function (d) {
    d.querySelectorAll("g.node").forEach(function (g) {
      var m = /^g\d+(.+)$/.exec(g.id);
      if (m) {
        g.setAttribute("data-node", m[1]);
        g.setAttribute("data-kind", g.getAttribute("class").split(" ")[1] || "node");
        g.setAttribute("tabindex", "0");  // Tab reaches every node; Enter or Space selects it
        g.setAttribute("role", "button");
        g.setAttribute("aria-label", Array.prototype.map.call(g.querySelectorAll("text"), function (t) {
          return t.textContent; }).join(" "));
      }
    });
  });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    return e;
  }
  function shapeText(shape) {
    if (!shape) { return "?"; }
    return "(" + shape.join(", ") + (shape.length === 1 ? ",)" : ")");
  }
  function bytesText(n) {
    if (n === undefined || n === null) { return "?"; }
    if (n < 1024) { return n + " B"; }
    if (n < 1048576) { return (n / 1024).toFixed(1) + " KB"; }
    return (n / 1048576).toFixed(1) + " MB";
  }
  function dtypeText(d) { return d ? String(d).replace("torch.", "") : "?"; }
  function table(head, rows) {
    var t = el("table"), tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", null, h)); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (c) {
        var td = el("td", c && c.cls ? c.cls : null, c && typeof c === "object" ? c.text : c);
        row.appendChild(td);
      });
      t.appendChild(row);
    });
    return t;
  }
  function tensorBlock(title, rec, empty) {
    var box = el("div");
    box.appendChild(el("h3", null, title));
    if (!rec) { box.appendChild(el("p", "hint", empty)); return box; }
    var facts = shapeText(rec.shape) + "  " + dtypeText(rec.dtype) + "  " + bytesText(rec.bytes);
    if (rec.norm !== undefined) { facts += "  norm " + rec.norm; }
    box.appendChild(el("div", "sub", facts));
    box.appendChild(el("div", "preview", rec.preview));
    return box;
  }

  function renderSummary(beat) {
    var n = 0, held = 0, freed = 0, leaves = 0, withGrad = 0;
    Object.keys(beat.nodes).forEach(function (id) {
      var rec = beat.nodes[id];
      if (rec.kind === "node") {
        n += 1;
        (rec.saved || []).forEach(function (s) { if (s.freed) { freed += s.bytes || 0; } else { held += s.bytes || 0; } });
      } else if (rec.kind === "leaf") {
        leaves += 1;
        if (rec.grad) { withGrad += 1; }
      }
    });
    panel.appendChild(el("h2", null, beats.length > 1 ? "beat " + beat.n + ": " + beat.label : beat.title));
    panel.appendChild(el("p", "sub", beat.caption));
    // the beat's totals count an array saved by several nodes once (the per-node figures do not)
    if (typeof beat.held === "number") { held = beat.held; }
    if (typeof beat.freed === "number") { freed = beat.freed; }
    panel.appendChild(table(["graph", ""], [
      ["backward nodes", n], ["saved tensors held", bytesText(held)],
      ["saved tensors freed", beat.freed === null ? "unknown" : bytesText(freed)],
      ["leaves with .grad", withGrad + " of " + leaves]]));
    panel.appendChild(el("p", "hint", "Click a node to see its op, inputs, saved tensors and gradient."));
  }

  function renderPanel(id) {
    var beat = beats[current];
    var rec = beat.nodes[id];
    panel.textContent = "";
    panel.setAttribute("data-node", id || "");
    if (!rec) { renderSummary(beat); return; }
    var title = el("h2", null, rec.kind === "node" ? rec.op : (rec.name || (rec.kind === "leaf" ? "leaf tensor" : "output")));
    panel.appendChild(title);
    if (rec.kind === "node") {
      var sub = el("div", "sub", (rec.leaf !== undefined ? "into the .grad of leaf " + (rec.leaf || "") + " " : "output ") +
        shapeText(rec.shape) + " " + dtypeText(rec.dtype));
      if (rec.released) { sub.appendChild(el("span", "badge freed", "released")); }
      if (rec.raised) { sub.appendChild(el("span", "badge raised", "raised here")); }
      if (!rec.released && rec.saved && rec.saved.length) { sub.appendChild(el("span", "badge held", "holds saved tensors")); }
      panel.appendChild(sub);
      if (rec.raised) {
        panel.appendChild(el("p", "sub", "The second backward reached this node and raised: the tensors its " +
          "backward needs were freed by the first one."));
      }
      var attrs = Object.keys(rec.attrs || {});
      if (attrs.length) {
        panel.appendChild(el("h3", null, "arguments"));
        panel.appendChild(table(["name", "value"], attrs.map(function (k) { return [k, rec.attrs[k]]; })));
      }
      panel.appendChild(el("h3", null, "inputs"));
      if (!rec.inputs.length) {
        panel.appendChild(el("p", "hint", "none: this node adds the incoming gradient into its leaf's .grad"));
      } else {
        var sentAny = rec.inputs.some(function (inp) { return inp.grad; });
        var head = ["#", "from", "shape", "dtype"].concat(sentAny ? ["grad sent"] : []);
        panel.appendChild(table(head, rec.inputs.map(function (inp, k) {
          if (!inp.op) { return [k, { text: "(needs no gradient)", cls: "freed" }, "", ""].concat(sentAny ? [""] : []); }
          var from = inp.op + (inp.leaf ? " (" + inp.leaf + ")" : "");
          var row = [k, from, shapeText(inp.shape), dtypeText(inp.dtype)];
          if (sentAny) { row.push(inp.grad ? "norm " + (inp.grad.norm === null ? "?" : inp.grad.norm) : "-"); }
          return row;
        })));
      }
      panel.appendChild(el("h3", null, "saved for backward"));
      if (!rec.saved.length) {
        panel.appendChild(el("p", "hint", "nothing: this op's backward needs no tensor"));
      } else {
        var total = 0;
        rec.saved.forEach(function (s) { total += s.bytes || 0; });
        panel.appendChild(table(["name", "shape", "dtype", "bytes"], rec.saved.map(function (s) {
          var c = s.freed ? "freed" : null;
          return [{ text: s.name, cls: c }, { text: shapeText(s.shape), cls: c }, { text: dtypeText(s.dtype), cls: c },
                  { text: bytesText(s.bytes) + (s.freed ? " freed" : ""), cls: c }];
        })));
        rec.saved.forEach(function (s) {
          if (!s.freed && s.preview) { panel.appendChild(el("div", "preview", s.name + " = " + s.preview)); }
        });
        panel.appendChild(el("div", "sub", (rec.released ? "freed by backward: " : "held: ") + bytesText(total)));
      }
      var gradTitle = "gradient that flowed in" + (beat.grads_note ? " (" + beat.grads_note + ")" : "");
      if (!rec.grads || !rec.grads.length) {
        panel.appendChild(tensorBlock(gradTitle, null, beat.no_grads ? beat.no_grads :
          beat.backward ? "none: backward did not reach this node" : "none yet: backward has not run on this graph"));
      } else {
        rec.grads.forEach(function (g, k) {
          panel.appendChild(tensorBlock(rec.grads.length > 1 ? gradTitle + ", output " + k : gradTitle, g,
            "none for this output"));
        });
      }
    } else if (rec.kind === "leaf") {
      panel.appendChild(el("div", "sub", shapeText(rec.shape) + " " + dtypeText(rec.dtype) +
        (rec.requires_grad ? "  requires_grad=True" : "")));
      panel.appendChild(tensorBlock("value", rec.value, ""));
      panel.appendChild(tensorBlock(".grad", rec.grad, "None: no backward has reached this leaf yet"));
      if (rec.grad_accumulated) {
        panel.appendChild(tensorBlock(".grad once this graph's backward runs too (accumulated)", rec.grad_accumulated, ""));
      }
    } else {
      panel.appendChild(el("div", "sub", shapeText(rec.shape) + " " + dtypeText(rec.dtype)));
      panel.appendChild(tensorBlock("value", rec.value, ""));
    }
  }

  function select(id) {
    selected = id;
    drawings.forEach(function (d) {
      d.querySelectorAll("g.node").forEach(function (g) {
        g.classList.toggle("selected", g.getAttribute("data-node") === id);
      });
    });
    renderPanel(id);
  }

  function show(i) {
    if (i < 0 || i >= beats.length) { return; }
    current = i;
    var beat = beats[i];
    var prefix = "g" + beat.graph;
    drawings.forEach(function (d) { d.hidden = Number(d.getAttribute("data-graph")) !== beat.graph; });
    Object.keys(beat.nodes).forEach(function (id) {
      var rec = beat.nodes[id], g = document.getElementById(prefix + id);
      if (!g) { return; }
      g.classList.toggle("released", !!rec.released);
      g.classList.toggle("raised", !!rec.raised);
      var texts = g.querySelectorAll("text");
      if (rec.line && texts.length) { texts[texts.length - 1].textContent = rec.line; }
    });
    (beat.edges || []).forEach(function (state, k) {
      var e = document.getElementById(prefix + "e" + k);
      if (e) { e.classList.toggle("grad", state === "grad"); }
    });
    var caption = document.getElementById("caption");
    caption.textContent = "";
    caption.appendChild(el("strong", null, beat.title));
    caption.appendChild(document.createTextNode(" \u2014 " + beat.caption));
    var err = document.getElementById("error");
    err.hidden = !beat.error;
    err.textContent = beat.error || "";
    buttons.querySelectorAll("button").forEach(function (b, k) { b.setAttribute("aria-pressed", k === i ? "true" : "false"); });
    slider.value = String(i + 1);
    document.getElementById("prev").disabled = i === 0;
    document.getElementById("next").disabled = i === beats.length - 1;
    document.body.setAttribute("data-beat", String(beat.n));
    select(selected && beat.nodes[selected] ? selected : null);
  }

  beats.forEach(function (beat, k) {
    var b = el("button", null, beat.n + " " + beat.label);
    b.type = "button";
    b.setAttribute("data-beat", String(beat.n));
    b.addEventListener("click", function () { show(k); });
    buttons.appendChild(b);
  });
  slider.max = String(beats.length);
  if (beats.length < 2) { document.getElementById("beats").hidden = true; }
  slider.addEventListener("input", function () { show(Number(slider.value) - 1); });
  document.getElementById("prev").addEventListener("click", function () { show(current - 1); });
  document.getElementById("next").addEventListener("click", function () { show(current + 1); });
  view.addEventListener("click", function (ev) {
    var g = ev.target.closest ? ev.target.closest("g.node") : null;
    select(g ? g.getAttribute("data-node") : null);
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.target && ev.target.tagName === "INPUT" && ev.target.type === "range") { return; }
    if (ev.key === "ArrowRight") { show(current + 1); ev.preventDefault(); }
    else if (ev.key === "ArrowLeft") { show(current - 1); ev.preventDefault(); }
    else if (ev.key === "Escape") { select(null); }
    else if ((ev.key === "Enter" || ev.key === " ") && ev.target.getAttribute && ev.target.getAttribute("data-node")) {
      select(ev.target.getAttribute("data-node"));
      ev.preventDefault();
    }
  });
  var fit = document.getElementById("fit");
  fit.addEventListener("click", function () {
    var on = fit.getAttribute("aria-pressed") !== "true";
    fit.setAttribute("aria-pressed", on ? "true" : "false");
    view.classList.toggle("actual", !on);
  });
  show(0);
})();
"""
