// Berth live dashboard: a snapshot from /ui/api/state, then deltas and chart points over server-sent events
// from /ui/api/events. The node list is virtualised (only the visible rows exist in the DOM); the charts are
// cluster sums drawn with the reports' SVG charts (berth-charts.js).
"use strict";
(function () {
  const ROW = 28;
  const state = { seq: 0, nodes: new Map(), order: [], filtered: null, reservations: new Map(), quotas: new Map(),
                  podgroups: new Map(), pending: new Map(), totals: null, samples: [] };
  const $ = (id) => document.getElementById(id);
  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const cpu = (m) => (m >= 10000 ? (m / 1000).toFixed(0) : (m / 1000).toFixed(m % 1000 ? 2 : 0).replace(/\.?0+$/, "") || "0");
  const GI = 1024 * 1024 * 1024;
  const mem = (b) => (b >= 1024 * GI ? (b / (1024 * GI)).toFixed(1) + "Ti"
    : b >= GI ? (b / GI).toFixed(1) + "Gi" : Math.round(b / (1024 * 1024)) + "Mi");
  let dirty = { nodes: true, tables: true, charts: true };
  const collator = new Intl.Collator("en", { numeric: true });  // n2 before n10, as the server pages them

  // ----- data --------------------------------------------------------------------------------------
  async function loadState() {
    const first = await fetch("/ui/api/state?offset=0&limit=5000", { credentials: "same-origin" });
    if (first.status === 401) { location.reload(); return; }
    const doc = await first.json();
    state.nodes.clear();
    const items = doc.nodes.items.slice();
    for (let off = doc.nodes.limit; off < doc.nodes.total; off += doc.nodes.limit) {
      const page = await (await fetch(`/ui/api/state?offset=${off}&limit=${doc.nodes.limit}`)).json();
      items.push(...page.nodes.items);
    }
    for (const n of items) state.nodes.set(n.name, n);
    for (const [table, rows, key] of [["reservations", doc.reservations, "name"], ["quotas", doc.quotas, "key"],
                                      ["podgroups", doc.podgroups, "key"], ["pending", doc.pending, "key"]]) {
      state[table].clear();
      for (const r of rows) state[table].set(r[key], r);
    }
    state.seq = doc.seq; state.totals = doc.totals; state.samples = doc.samples || [];
    reorder(); dirty = { nodes: true, tables: true, charts: true };
  }

  function reorder() {
    state.order = Array.from(state.nodes.keys()).sort(collator.compare);
    const f = $("node-filter").value.trim();
    state.filtered = f ? state.order.filter((n) => n.includes(f)) : state.order;
  }

  function applyDelta(d) {
    if (d.reset) { connect(true); return; }
    state.seq = d.seq; state.totals = d.totals;
    const keys = { nodes: "name", reservations: "name", quotas: "key", podgroups: "key", pending: "key" };
    let added = false;
    for (const table of Object.keys(keys)) {
      const change = d[table];
      if (!change) continue;
      for (const row of change.set) { if (table === "nodes" && !state.nodes.has(row.name)) added = true; state[table].set(row[keys[table]], row); }
      for (const k of change.del) { state[table].delete(k); if (table === "nodes") added = true; }
      if (table === "nodes") dirty.nodes = true; else dirty.tables = true;
    }
    if (added) reorder();
  }

  let source = null;
  async function connect(reload) {
    if (source) source.close();
    if (reload) { try { await loadState(); } catch (e) { setTimeout(() => connect(true), 2000); return; } }
    source = new EventSource(`/ui/api/events?since=${state.seq}`);
    source.addEventListener("open", () => { $("conn").textContent = "live"; $("conn").className = "conn live"; });
    source.addEventListener("delta", (e) => applyDelta(JSON.parse(e.data)));
    source.addEventListener("sample", (e) => {
      const p = JSON.parse(e.data);
      const last = state.samples[state.samples.length - 1];
      if (!last || p.t > last.t) { state.samples.push(p); if (state.samples.length > 2000) state.samples.shift(); dirty.charts = true; }
    });
    source.addEventListener("error", () => {
      $("conn").textContent = "reconnecting…"; $("conn").className = "conn";
      source.close(); source = null;
      setTimeout(() => connect(true), 2000);  // reload the snapshot: the stream may have missed changes
    });
  }

  // ----- rendering ---------------------------------------------------------------------------------
  function bar(alloc, req, res) {
    if (!alloc) return '<div class="bar"></div>';
    const r = Math.min(100, (100 * req) / alloc), s = Math.min(100 - r, (100 * res) / alloc);
    return `<div class="bar"><span class="req" style="width:${r.toFixed(1)}%"></span><span class="res" style="width:${s.toFixed(1)}%"></span></div>`;
  }

  function renderNodes() {
    const vp = $("node-viewport"), list = state.filtered || [];
    $("node-spacer").style.height = list.length * ROW + "px";
    $("node-count").textContent = `${list.length} of ${state.order.length} nodes`;
    const first = Math.max(0, Math.floor(vp.scrollTop / ROW) - 5);
    const last = Math.min(list.length, first + Math.ceil(vp.clientHeight / ROW) + 10);
    const out = [];
    for (let i = first; i < last; i++) {
      const n = state.nodes.get(list[i]);
      if (!n) continue;
      const [ac, am, ap] = n.allocatable, [rc, rm] = n.requested, [sc, sm] = n.reserved;
      out.push(`<div class="node-row${n.ready && n.known ? "" : " notready"}" data-node="${esc(n.name)}" style="position:absolute;top:${i * ROW}px;left:0;right:0">` +
        `<span class="name" title="${esc(n.name)}">${esc(n.name)}${n.unschedulable ? " (cordoned)" : ""}</span>` +
        `<span class="cell">${bar(ac, rc, sc)}<small>${cpu(rc)} + ${cpu(sc)} reserved / ${cpu(ac)}</small></span>` +
        `<span class="cell">${bar(am, rm, sm)}<small>${mem(rm)} + ${mem(sm)} reserved / ${mem(am)}</small></span>` +
        `<span>${n.pods} / ${ap}</span></div>`);
    }
    $("node-rows").innerHTML = out.join("");
  }

  function fill(id, rows) { document.querySelector(`#${id} tbody`).innerHTML = rows.join(""); }
  function limit(v, f) { return v === null || v === undefined || v < 0 ? "—" : f(v); }

  function renderTables() {
    const byKey = (m) => Array.from(m.keys()).sort().map((k) => m.get(k));
    fill("reservations", byKey(state.reservations).map((r) =>
      `<tr><td>${esc(r.name)}</td><td>${esc(r.phase)}</td><td>${esc(r.node)}</td><td>${r.owners.map(esc).join("<br>")}</td>` +
      `<td>${cpu(r.allocated[0])} / ${cpu(r.allocatable[0])}</td><td>${mem(r.allocated[1])} / ${mem(r.allocatable[1])}</td></tr>`));
    fill("quotas", byKey(state.quotas).map((q) =>
      `<tr><td>${esc(q.key)}</td><td>${cpu(q.used[0])}</td><td>${cpu(q.min[0])}</td><td>${limit(q.max && q.max[0], cpu)}</td>` +
      `<td>${mem(q.used[1])}</td><td>${mem(q.min[1])}</td><td>${limit(q.max && q.max[1], mem)}</td></tr>`));
    fill("podgroups", byKey(state.podgroups).map((g) =>
      `<tr><td>${esc(g.key)}</td><td>${esc(g.phase)}</td><td>${g.minMember}</td><td>${g.scheduled}</td><td>${g.running}</td><td>${g.failed}</td></tr>`));
    const pend = byKey(state.pending).slice(0, 2000);  // the first 2000 by name; the count is in the header
    fill("pending", pend.map((p) =>
      `<tr data-pod="${esc(p.key)}"><td>${esc(p.key)}</td><td>${cpu(p.cpu)}</td><td>${mem(p.memory)}</td><td>${p.priority}</td>` +
      `<td>${esc(p.reason)}</td><td>${esc(p.message)}</td></tr>`));
  }

  function renderTotals() {
    const t = state.totals;
    if (!t) return;
    const pct = (a, b) => (b ? Math.round((100 * a) / b) + "%" : "—");
    $("totals").innerHTML = [
      ["nodes", t.nodes], ["cpu requested", `${cpu(t.requested[0])} / ${cpu(t.allocatable[0])} (${pct(t.requested[0], t.allocatable[0])})`],
      ["memory requested", `${mem(t.requested[1])} / ${mem(t.allocatable[1])} (${pct(t.requested[1], t.allocatable[1])})`],
      ["reserved", `${cpu(t.reserved[0])} cpu, ${mem(t.reserved[1])}`], ["bound pods", t.bound], ["pending pods", t.pending],
      ["reservations", t.reservations], ["quotas", t.quotas], ["pod groups", t.podgroups],
    ].map(([k, v]) => `<div>${esc(k)}<b>${esc(v)}</b></div>`).join("");
  }

  // The charts are the reports' (berth-charts.js: window.BerthCharts), redrawn from the samples so far; x is
  // seconds since the first sample this page has.
  // The sample points as the report's series object (berth-charts.js seriesCharts draws the report's charts).
  function seriesOf(s) {
    const t0 = s[0].t, resources = ["cpu", "memory", "pods"], last = s[s.length - 1];
    const groups = [];
    for (const p of s) for (const g of Object.keys(p.groups || {})) if (!groups.includes(g)) groups.push(g);
    const per = (field) => Object.fromEntries(resources.map((r, i) => [r, s.map((p) => (p[field] || [0, 0, 0])[i])]));
    const perGroup = (field) => Object.fromEntries(resources.map((r, i) => [r, s.map((p) =>
      groups.map((g) => ((p.groups || {})[g] ? p.groups[g][field][i] : 0)))]));
    const quotas = {};
    for (const key of Object.keys(last.quotas || {})) {
      const q = last.quotas[key], max = q.max;
      const used = (i) => s.map((p) => (p.quotas && p.quotas[key] ? p.quotas[key].used[i] : null));
      quotas[key] = {
        used: { cpu: used(0), memory: used(1) },
        min: { cpu: q.min[0], memory: q.min[1] },
        max: max ? { cpu: max[0] < 0 ? null : max[0], memory: max[1] < 0 ? null : max[1] } : null,
      };
    }
    return {
      time: s.map((p) => p.t - t0),
      resources,
      utilisation: {
        requested: per("requested"), allocatable: per("allocatable"),
        groupLabel: last.groupLabel || "shape", groups,
        groupRequested: perGroup("requested"), groupAllocatable: perGroup("allocatable"),
      },
      pending: s.map((p) => p.pending),
      pendingWaitMean: s.map((p) => p.pendingWaitMean ?? null),
      pendingWaitMax: s.map((p) => p.pendingWaitMax ?? null),
      latencyMean: s.map((p) => p.latencyMean ?? null),
      latencyMax: s.map((p) => p.latencyMax ?? null),
      scheduled: s.map((p) => p.scheduled ?? null),
      gangsWaiting: s.map((p) => p.gangsWaiting ?? 0),
      preemptionVictims: s.map((p) => p.preemptionVictims ?? null),
      evictions: s.map((p) => p.evictions ?? null),
      reservations: { reserved: s.map((p) => p.reserved || [0, 0]), allocated: s.map((p) => p.reservationAllocated || [0, 0]) },
      quotas,
    };
  }

  function renderCharts() {
    const s = state.samples, box = $("charts");
    box.replaceChildren();
    if (!s.length) return;
    window.BerthCharts.seriesCharts(box, seriesOf(s));
  }

  // ----- explain -----------------------------------------------------------------------------------
  let explaining = null;
  async function explain(key, tries = 0) {
    const box = $("explain");
    if (tries === 0) { box.hidden = false; box.textContent = "loading…"; }
    explaining = key;
    const [ns, name] = key.split("/");
    const doc = await (await fetch(`/ui/api/explain/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`)).json();
    if (explaining !== key) return;  // another pod was clicked meanwhile
    if (!doc.attempt && doc.recording && doc.pending && tries < 10) setTimeout(() => explain(key, tries + 1), 1000);
    const p = doc.pending;
    let out = `<h3>${esc(key)}</h3>`;
    if (p) out += `<p><b>${esc(p.reason || "Pending")}</b> ${esc(p.message)}</p>`;
    const a = doc.attempt;
    if (!a) {
      out += doc.recording
        ? (tries < 10 && doc.pending ? "<p>Asking the scheduler to retry this pod and record the attempt…</p>"
                                     : "<p>No attempt of this pod was recorded (is it for another scheduler, or gated?).</p>")
        : "<p>This server runs no scheduler (--api-only): nothing to explain.</p>";
    } else {
      out += `<p>attempt ${a.attempt}, profile ${esc(a.profile)}${a.failure ? ": " + esc(a.failure) : ""}${a.selected ? ", selected " + esc(a.selected) : ""}</p>`;
      const pre = Object.entries(a.preFilter || {});
      if (pre.length) out += "<h4>PreFilter</h4><table>" + pre.map(([k, v]) => `<tr><td>${esc(k)}</td><td class="${v === "passed" ? "pass" : "fail"}">${esc(v)}</td></tr>`).join("") + "</table>";
      const plugins = a.filterPlugins || [];
      const nodes = Object.keys(a.filter || {}).sort().slice(0, 500);
      if (nodes.length) {
        out += `<h4>Filter (${nodes.length} nodes${Object.keys(a.filter).length > 500 ? " of " + Object.keys(a.filter).length : ""})</h4><table><tr><th>node</th>` +
          plugins.map((x) => `<th>${esc(x)}</th>`).join("") + "</tr>";
        for (const n of nodes) {
          out += `<tr><td>${esc(n)}</td>` + plugins.map((x) => { const v = a.filter[n][x] || ""; return `<td class="${v === "passed" ? "pass" : "fail"}">${esc(v)}</td>`; }).join("") + "</tr>";
        }
        out += "</table>";
      }
      const totals = Object.entries(a.totalScores || {}).sort((x, y) => y[1] - x[1]).slice(0, 20);
      if (totals.length) out += "<h4>Scores (top 20)</h4><table>" + totals.map(([n, v]) => `<tr><td>${esc(n)}</td><td>${v}</td></tr>`).join("") + "</table>";
      if ((a.reservations || []).length) out += "<h4>Reservations</h4><table>" + a.reservations.map((r) => `<tr><td>${esc(r.name)}</td><td>${esc(r.node || "")}</td><td>${esc(r.result || "")}</td><td>${esc(r.reason || "")}</td></tr>`).join("") + "</table>";
    }
    box.innerHTML = out;
    box.dataset.attempt = a ? String(a.attempt) : "";
  }

  // ----- pages and loop ----------------------------------------------------------------------------
  function showPage() {
    const page = (location.hash || "#overview").slice(1);
    for (const s of document.querySelectorAll(".page")) s.classList.toggle("active", s.id === "page-" + page);
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.page === page);
    dirty = { nodes: true, tables: true, charts: true };
  }

  function frame() {
    renderTotals();
    if (dirty.nodes && $("page-nodes").classList.contains("active")) { renderNodes(); dirty.nodes = false; }
    if (dirty.tables) { renderTables(); dirty.tables = false; }
    if (dirty.charts && $("page-overview").classList.contains("active")) { renderCharts(); dirty.charts = false; }
    document.body.dataset.seq = String(state.seq);
    setTimeout(() => requestAnimationFrame(frame), 250);  // at most four renders a second, whatever the rate of deltas
  }

  window.addEventListener("hashchange", showPage);
  window.addEventListener("resize", () => { dirty.nodes = dirty.charts = true; });
  $("node-viewport").addEventListener("scroll", () => requestAnimationFrame(renderNodes), { passive: true });
  $("node-filter").addEventListener("input", () => { reorder(); $("node-viewport").scrollTop = 0; renderNodes(); });
  document.querySelector("#pending tbody").addEventListener("click", (e) => {
    const tr = e.target.closest("tr[data-pod]");
    if (tr) explain(tr.dataset.pod);
  });
  showPage();
  connect(true).then(() => requestAnimationFrame(frame));
})();
