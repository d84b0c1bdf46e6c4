// Berth's charts: small SVG line charts and a heat map drawn from the JSON of a report
// (the application/json script element "berth-data"). No dependencies; works offline.
// Used by the HTML reports of `berth simulate` / `berth trace openb` / `berth compare` (--report-html).
(function () {
  "use strict";
  const NS = "http://www.w3.org/2000/svg";
  const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf"];
  const MAX_SERIES = 10;

  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }

  function fmtNum(v) {
    if (v === null || v === undefined || Number.isNaN(v)) return "";
    const a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(1) + "G";
    if (a >= 1e6) return (v / 1e6).toFixed(1) + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(1) + "k";
    if (a !== 0 && a < 0.01) return v.toExponential(1);
    return String(Math.round(v * 100) / 100);
  }

  function fmtTime(s) {
    if (s >= 3600) return (s / 3600).toFixed(1) + "h";
    if (s >= 120) return Math.round(s / 60) + "m";
    return Math.round(s) + "s";
  }

  // One chart: `series` is [{name, values}] over `xs`; null values leave gaps.
  function lineChart(parent, title, xs, series, opts) {
    opts = opts || {};
    const box = document.createElement("figure");
    box.className = "chart";
    const cap = document.createElement("figcaption");
    cap.textContent = title;
    box.appendChild(cap);
    parent.appendChild(box);
    series = series.slice(0, MAX_SERIES);
    const W = 560, H = 220, L = 56, R = 10, T = 10, B = 28;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "berth-chart",
      "data-series": series.length, "data-points": xs.length, role: "img", "aria-label": title }, box);
    let ymin = opts.ymin !== undefined ? opts.ymin : 0, ymax = opts.ymax !== undefined ? opts.ymax : -Infinity;
    for (const s of series) for (const v of s.values) if (v !== null && v > ymax) ymax = v;
    if (!(ymax > ymin)) ymax = ymin + 1;
    const x0 = xs.length ? xs[0] : 0, x1 = xs.length > 1 ? xs[xs.length - 1] : x0 + 1;
    const sx = (x) => L + ((x - x0) / (x1 - x0 || 1)) * (W - L - R);
    const sy = (y) => T + (1 - (y - ymin) / (ymax - ymin)) * (H - T - B);
    el("rect", { x: L, y: T, width: W - L - R, height: H - T - B, class: "plot" }, svg);
    for (let i = 0; i <= 4; i++) {
      const y = ymin + ((ymax - ymin) * i) / 4;
      el("line", { x1: L, x2: W - R, y1: sy(y), y2: sy(y), class: "grid" }, svg);
      const t = el("text", { x: L - 4, y: sy(y) + 4, class: "tick", "text-anchor": "end" }, svg);
      t.textContent = opts.percent ? Math.round(y * 100) + "%" : fmtNum(y);
    }
    for (let i = 0; i <= 4; i++) {
      const x = x0 + ((x1 - x0) * i) / 4;
      const t = el("text", { x: sx(x), y: H - 8, class: "tick", "text-anchor": "middle" }, svg);
      t.textContent = opts.xIndex ? fmtNum(Math.round(x)) : fmtTime(x);
    }
    series.forEach((s, k) => {
      let d = "";
      let pen = false;
      for (let i = 0; i < xs.length; i++) {
        const v = s.values[i];
        if (v === null || v === undefined) { pen = false; continue; }
        d += (pen ? "L" : "M") + sx(xs[i]).toFixed(1) + " " + sy(v).toFixed(1);
        pen = true;
      }
      const p = el("path", { d: d || "M0 0", class: "series", stroke: COLOURS[k % COLOURS.length],
        "data-name": s.name }, svg);
      if (s.dash) p.setAttribute("stroke-dasharray", "5 3");
    });
    const legend = document.createElement("div");
    legend.className = "legend";
    series.forEach((s, k) => {
      const item = document.createElement("span");
      const sw = document.createElement("i");
      sw.style.background = COLOURS[k % COLOURS.length];
      item.appendChild(sw);
      item.appendChild(document.createTextNode(s.name));
      legend.appendChild(item);
    });
    box.appendChild(legend);
    return svg;
  }

  // Heat map: rows (nodes or bins of nodes) × columns (resources), colour = requested / allocatable.
  function heatMap(parent, title, rows, cols, requested, allocatable) {
    const box = document.createElement("figure");
    box.className = "chart heat";
    const cap = document.createElement("figcaption");
    cap.textContent = title;
    box.appendChild(cap);
    parent.appendChild(box);
    const cw = 70, ch = rows.length > 100 ? 3 : 14, L = 160, T = 20;
    const W = L + cw * cols.length + 10, H = T + ch * rows.length + 4;
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: "berth-chart berth-heat",
      "data-series": cols.length, "data-rows": rows.length, role: "img", "aria-label": title }, box);
    cols.forEach((c, j) => {
      const t = el("text", { x: L + cw * j + cw / 2, y: 14, class: "tick", "text-anchor": "middle" }, svg);
      t.textContent = c;
    });
    rows.forEach((r, i) => {
      if (ch >= 12) {
        const t = el("text", { x: L - 4, y: T + ch * i + ch - 3, class: "tick", "text-anchor": "end" }, svg);
        t.textContent = r;
      }
      cols.forEach((c, j) => {
        const a = allocatable[i][j], q = requested[i][j];
        const f = a > 0 ? Math.min(1, q / a) : 0;
        const rect = el("rect", { x: L + cw * j, y: T + ch * i, width: cw - 1, height: Math.max(1, ch - 1),
          fill: a > 0 ? `hsl(${Math.round(210 - 210 * f)}, 70%, ${Math.round(92 - 45 * f)}%)` : "#eee" }, svg);
        const tip = el("title", {}, rect);
        tip.textContent = `${r} ${c}: ${fmtNum(q)} / ${fmtNum(a)}`;
      });
    });
    return svg;
  }

  function table(parent, title, head, rows) {
    const box = document.createElement("figure");
    box.className = "chart table";
    const cap = document.createElement("figcaption");
    cap.textContent = title;
    box.appendChild(cap);
    const t = document.createElement("table");
    const tr = document.createElement("tr");
    head.forEach((h) => { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); });
    t.appendChild(tr);
    rows.forEach((r) => {
      const row = document.createElement("tr");
      r.forEach((v) => { const td = document.createElement("td"); td.textContent = v; row.appendChild(td); });
      t.appendChild(row);
    });
    box.appendChild(t);
    parent.appendChild(box);
  }

  function ratio(req, alloc) {
    return req.map((v, i) => (alloc[i] > 0 ? v / alloc[i] : null));
  }

  function section(root, title) {
    const s = document.createElement("section");
    const h = document.createElement("h2");
    h.textContent = title;
    s.appendChild(h);
    root.appendChild(s);
    return s;
  }

  // The report's time-series charts from a series object (drawSimulate's data; the live dashboard builds one
  // from its sample points): utilisation, scheduling, reservations and quotas. A series the object lacks
  // (undefined) is left out of its chart. Returns the last section, for the caller to add to.
  function seriesCharts(root, d) {
    const u = d.utilisation, xs = d.time;
    const line = (s, title, series, opts) => lineChart(s, title, xs, series.filter((x) => x.values !== undefined), opts);
    const res = d.resources.filter((r) => u.allocatable[r].some((v) => v > 0));
    let s = section(root, "Utilisation (requested / allocatable)");
    lineChart(s, "Cluster", xs, res.map((r) => ({ name: r, values: ratio(u.requested[r], u.allocatable[r]) })),
      { percent: true, ymax: 1 });
    for (const r of res) {
      if (!u.groups.length) break;
      lineChart(s, `${r} per node group (${u.groupLabel})`, xs, u.groups.map((g, k) => ({ name: g,
        values: ratio(u.groupRequested[r].map((row) => row[k]), u.groupAllocatable[r].map((row) => row[k])) })),
        { percent: true, ymax: 1 });
    }
    s = section(root, "Scheduling");
    line(s, "Pending pods", [{ name: "pending", values: d.pending }]);
    line(s, "Scheduling latency: creation to binding (s)", [{ name: "mean", values: d.latencyMean },
      { name: "max", values: d.latencyMax }]);
    line(s, "Wait of pending pods (s)", [{ name: "mean", values: d.pendingWaitMean },
      { name: "max", values: d.pendingWaitMax }]);
    line(s, d.attempts ? "Scheduled pods and attempts (cumulative)" : "Scheduled pods (cumulative)",
      [{ name: "scheduled", values: d.scheduled },
      { name: "attempts", values: d.attempts }]);
    line(s, d.preemptions ? "Preemptions and evictions (cumulative)" : "Preemption victims and evictions (cumulative)",
      [{ name: "preemptions", values: d.preemptions },
      { name: "victims", values: d.preemptionVictims }, { name: "evictions", values: d.evictions }]);
    s = section(root, "Reservations, quotas and gangs");
    const rs = d.reservations;
    ["cpu", "memory"].forEach((r, k) => {
      lineChart(s, `Reservation occupancy: ${r}`, xs, [
        { name: "reserved", values: rs.reserved.map((v) => v[k]) },
        { name: "allocated", values: rs.allocated.map((v) => v[k]) },
        { name: "free", values: rs.reserved.map((v, i) => v[k] - rs.allocated[i][k]) }]);
    });
    for (const key of Object.keys(d.quotas)) {
      const q = d.quotas[key];
      for (const r of ["cpu", "memory"]) {
        const hasMax = q.max && q.max[r] !== null && q.max[r] !== undefined;
        if (!q.min[r] && !hasMax && !q.used[r].some((v) => v)) continue;
        const series = [{ name: "used", values: q.used[r] },
          { name: "min", values: xs.map(() => q.min[r]), dash: true }];
        if (hasMax) {
          series.push({ name: "max", values: xs.map(() => q.max[r]), dash: true });
        }
        lineChart(s, `ElasticQuota ${key}: ${r}`, xs, series);
      }
    }
    if (d.gangsWaiting) {
      lineChart(s, "PodGroups short of minMember", xs, [{ name: "waiting gangs", values: d.gangsWaiting }]);
    }
    return s;
  }

  function drawSimulate(root, d) {
    let s = seriesCharts(root, d);
    const gangs = Object.keys(d.gangs);
    if (gangs.length) {
      table(s, "Gang waits", ["PodGroup", "minMember", "phase", "first seen", "wait (s)"], gangs.map((k) => {
        const g = d.gangs[k];
        return [k, g.minMember, g.phase, fmtTime(g.firstSeen),
          g.waitedUntil === null ? "still waiting" : String(g.waitedUntil - g.firstSeen)];
      }));
    }
    s = section(root, "Final placement");
    const p = d.placement;
    heatMap(s, p.nodesPerRow > 1 ? `Requested / allocatable, ${p.nodesPerRow} nodes a row` :
      "Requested / allocatable per node", p.nodes, p.resources, p.requested, p.allocatable);
    table(s, "Top FailedScheduling reasons", ["reason", "count"], d.failedReasons.map((r) => [r.reason, r.count]));
  }

  function drawTrace(root, d) {
    const s = section(root, "GPU allocation over the replay");
    const xs = d.time.length ? d.time : d.allocation.map((_, i) => i + 1);
    lineChart(s, d.time.length ? "GPU ratios over trace time" : "GPU ratios by arrival", xs, [
      { name: "allocated", values: d.allocation }, { name: "arrived", values: d.arrived },
      { name: "fragmented", values: d.fragmentation }], { percent: true, xIndex: !d.time.length });
    const p = d.placement;
    if (p && p.nodes.length) {
      const h = section(root, "Final placement");
      heatMap(h, p.nodesPerRow > 1 ? `Requested / allocatable, ${p.nodesPerRow} nodes a row` :
        "Requested / allocatable per node", p.nodes, p.resources, p.requested, p.allocatable);
    }
  }

  // berth compare: per workload, the comparison table, the charts overlaying the configurations (one line
  // each, the mean over its seeds) and every run's final values.
  function drawCompare(root, d) {
    for (const w of d.workloads) {
      const s = section(root, w.caption);
      table(s, "Outcomes per configuration (mean ± " + d.spread + ")", w.rows[0], w.rows.slice(1));
      const note = document.createElement("p");
      note.className = "note";
      note.textContent = w.note;
      s.appendChild(note);
      for (const c of w.charts) {
        lineChart(s, c.title, w.x, c.series, c.percent ? { percent: true, ymax: 1, xIndex: w.xIndex } :
          { xIndex: w.xIndex });
      }
      table(s, "Final values per configuration and seed", w.finals[0], w.finals.slice(1));
    }
  }

  function draw() {
    const src = document.getElementById("berth-data");
    const root = document.getElementById("berth-report");
    if (!src || !root) return;
    const d = JSON.parse(src.textContent);
    if (d.kind === "trace") drawTrace(root, d);
    else if (d.kind === "compare") drawCompare(root, d);
    else drawSimulate(root, d);
    document.body.dataset.rendered = "true";
  }

  window.BerthCharts = { lineChart, heatMap, table, seriesCharts };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", draw); else draw();
})();
