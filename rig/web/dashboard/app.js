// The dashboard: the run's header from /api/v1/run, plots fed by the
// WebSocket stream, and a control strip that sends changes to the API.
"use strict";

const params = new URLSearchParams(location.search);
const token = params.get("token") || "";
const rate = params.get("rate") || "10";
const $ = (id) => document.getElementById(id);

// What the lateness plot says of a real-time run without releases to
// devices yet (endpoints played in software are not timed).
const realTimeLateness = "real time: no frame released to a device yet";

const plots = {
  delay: new Plot($("plot-delay"), { format: seconds }),
  loss: new Plot($("plot-loss"), { format: percent }),
  queue: new Plot($("plot-queue"), { format: bytes, least: 1000 }), // an empty queue is not drawn in fractions of a byte
  model: new Plot($("plot-model"), { zero: false, empty: "no model endpoint in this run" }),
  sync: new Plot($("plot-sync"), { format: seconds, empty: "no supervised model in this run" }),
  late: new Plot($("plot-late"), { format: seconds, empty: "virtual time: nothing is late" }),
  endpoints: new Plot($("plot-endpoints"), { format: perSecond, empty: "no device in this run (endpoints played in software)" }),
};

// The page's state, also for tests driving it.
const hilrig = (window.hilrig = { plots: plots, messages: 0, last: null, info: null, ended: false });

function api(method, path, body) {
  const headers = {};
  if (token) headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  return fetch(path, { method: method, headers: headers, body: body === undefined ? undefined : JSON.stringify(body) })
    .then((r) => r.json().then((j) => {
      if (!r.ok) throw new Error(j.error + (j.path ? " (at " + j.path + ")" : ""));
      return j;
    }));
}

function say(text, kind) {
  const m = $("message");
  m.textContent = text;
  m.className = kind || "";
}

function setState(state) {
  const s = $("state");
  s.textContent = state;
  s.className = "tag " + state;
}

let loading = false;

function load() {
  if (loading) return;
  loading = true;
  api("GET", "/api/v1/run").then((info) => {
    hilrig.info = info;
    $("profile").textContent = info.profile + (info.bench ? " on " + info.bench : "");
    $("clock").textContent = info.clock + " time";
    setState(info.state);
    const hop = $("hop");
    const chosen = hop.value;
    hop.textContent = "";
    for (const name of info.hops) {
      const o = document.createElement("option");
      o.textContent = name;
      hop.appendChild(o);
    }
    if (chosen) hop.value = chosen;
    $("controls").hidden = info.read_only || hilrig.ended;
    say("", "");
  }).catch((e) => say("cannot read the run: " + e.message, "error"))
    .finally(() => { loading = false; });
}

// the run's state in the last message
let lastState = null;

function onMessage(m) {
  hilrig.messages++;
  hilrig.last = m;
  const t = m.t_s;
  $("time").textContent = t.toFixed(1) + " s";
  if (m.state !== lastState) {
    lastState = m.state;
    if (m.state === "ended") {
      // The server stops with the run: what this message says is final.
      hilrig.ended = true;
      $("controls").hidden = true;
      $("conn").textContent = "the run has ended";
    } else {
      load(); // the run started: its header and hops again
    }
  }
  setState(m.state);
  showSummary(m);
  showHop();
  if (m.reset) for (const p of Object.values(plots)) p.clear();
  for (const sr of m.series || []) plotSeries(sr);
  if (m.timing && plots.late.empty !== realTimeLateness) {
    plots.late.empty = realTimeLateness; // a real clock, but no frame released to a device yet
    plots.late.dirty = true;
  }
  showEndpoints(m);
  for (const e of m.events || []) addEvent(e);
}

// plotSeries puts a series' points, from the server's history of the run
// or new since the last message, on its plot: a state (an outage, out of
// sync, a device away) as a band over its plot's lines.
function plotSeries(sr) {
  const bands = { outage: plots.queue, out_of_sync: plots.sync, away: plots.endpoints };
  const band = bands[sr.plot];
  if (band) {
    const color = sr.plot === "away" ? tint(band.line(sr.name, sr.name).color) : undefined;
    for (const p of sr.points) band.band(sr.name, p[0], p[1] !== null && (p.length > 3 ? p[3] : p[1]) > 0, color);
    return;
  }
  const put = (plot, key, label, style) => { for (const p of sr.points) plot.put(key, label, p, style); };
  switch (sr.plot) {
    case "delay":
      if (sr.part === "p50") put(plots.delay, sr.name + "/p50", sr.name);
      else put(plots.delay, sr.name + "/p99", "", { color: plots.delay.line(sr.name + "/p50", sr.name).color, dash: [4, 3] });
      break;
    case "loss": put(plots.loss, sr.name, sr.name); break;
    case "queue": put(plots.queue, sr.name, sr.name); break;
    case "model":
      if (sr.part === "value") put(plots.model, sr.name + "/v", sr.name + "." + modelOutput(sr.name));
      else put(plots.model, sr.name + "/i", "uncut", { color: plots.model.line(sr.name + "/v", sr.name).color, dash: [5, 4] });
      break;
    case "sync": put(plots.sync, sr.name, sr.name); break;
    case "late": put(plots.late, "p99", "release p99"); break;
    case "endpoint_in": put(plots.endpoints, sr.name, sr.name); break;
  }
}

// modelOutput is the name of a model endpoint's output of interest.
function modelOutput(endpoint) {
  const md = hilrig.last && (hilrig.last.models || []).find((md) => md.endpoint === endpoint);
  return md && md.output ? md.output : "output";
}

// tint is a colour of the palette, light enough to shade with.
function tint(hex) {
  const n = parseInt(hex.slice(1), 16);
  return "rgba(" + (n >> 16) + "," + (n >> 8 & 255) + "," + (n & 255) + ",.14)";
}

function perSecond(v) { return trim(v) + "/s"; }

// showEndpoints fills the endpoints' table: each device's state now and
// what its driver counted, with the wire protocol's account for those
// that speak it.
function showEndpoints(m) {
  const wire = new Map((m.wire || []).map((w) => [w.name, w]));
  const rows = [];
  for (const e of m.endpoints || []) {
    const w = wire.get(e.name);
    wire.delete(e.name);
    rows.push({ name: e.name, away: !e.connected,
      cells: [e.name, e.connected ? "connected" + (e.gaps ? ", back" : "") : "away since " + trim(e.away_since_s) + " s", e.gaps,
        e.frames_in, e.frames_out, bytes(e.bytes_in), bytes(e.bytes_out), e.bad_frames, e.write_errors,
        w ? w.crc_errors : "–", w ? w.malformed : "–"] });
  }
  for (const w of wire.values()) {
    rows.push({ name: w.name, away: false, cells: [w.name, "played in software", "–", w.messages, "–", "–", "–", "–", "–", w.crc_errors, w.malformed] });
  }
  const body = $("endpoints").tBodies[0];
  body.textContent = "";
  for (const r of rows) {
    const tr = document.createElement("tr");
    tr.dataset.endpoint = r.name;
    if (r.away) tr.className = "away";
    for (const v of r.cells) {
      const td = document.createElement("td");
      td.textContent = v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  $("endpoints-none").hidden = rows.length > 0;
}

// The plots' window and the delay axis, kept across reloads.
const view = { window: localStorage.getItem("hilrig.window") || "60", log: localStorage.getItem("hilrig.log") === "1" };

function setView() {
  const span = view.window === "all" ? Infinity : Number(view.window);
  for (const p of Object.values(plots)) { p.span = span; p.dirty = true; }
  plots.delay.log = view.log;
  $("window").value = view.window;
  $("delay-axis").value = view.log ? "log" : "linear";
  localStorage.setItem("hilrig.window", view.window);
  localStorage.setItem("hilrig.log", view.log ? "1" : "0");
}

$("window").addEventListener("change", () => { view.window = $("window").value; setView(); });
$("delay-axis").addEventListener("change", () => { view.log = $("delay-axis").value === "log"; setView(); });
setView();

// showHop puts the chosen hop's settings, as the profile language
// writes them (the hop's params), as the control strip's placeholders:
// what the hop has now, "none" where it has none.
function showHop() {
  const h = hilrig.last && hilrig.last.hops.find((h) => h.name === $("hop").value);
  if (!h || !h.params) return;
  $("delay").placeholder = paramText(h.params.delay);
  $("rate").placeholder = paramText(h.params.rate);
  $("loss").placeholder = paramText(h.params.loss);
  $("hop-form").title = Object.entries(h.params).map(([k, v]) => k + ": " + paramText(v)).join("\n");
}

// paramText writes a parameter as the profile language does: random
// loss as its probability, other structures as {key: value, ...}.
function paramText(v) {
  if (typeof v === "string") return v;
  if (v && typeof v.random === "string") return v.random;
  if (v && typeof v === "object") return "{" + Object.entries(v).map(([k, x]) => k + ": " + paramText(x)).join(", ") + "}";
  return String(v);
}

function profileDuration(s) {
  if (s === 0) return "0s";
  if (s >= 1) return trim(s) + "s";
  if (s >= 1e-3) return trim(s * 1e3) + "ms";
  return trim(s * 1e6) + "us";
}

function profileRate(bps) {
  if (bps >= 1e6) return trim(bps / 1e6) + "Mbit";
  if (bps >= 1e3) return trim(bps / 1e3) + "kbit";
  return bps + "bit";
}

$("hop").addEventListener("change", showHop);

// showSummary puts each flow's counts so far in the summary table, and
// once the run has ended its final summary, kept when the server has gone.
function showSummary(m) {
  const rows = [];
  if (m.summary) {
    const s = m.summary;
    $("time").textContent = s.duration_s.toFixed(1) + " s";
    $("summary-title").textContent = "Final summary: the run ended at " + trim(s.duration_s) + " s (" + s.stopped + ")";
    for (const f of s.flows || []) {
      const d = f.dropped || {};
      const lost = Object.values(d).reduce((a, b) => a + b, 0);
      rows.push([f.name, f.sent, f.delivered, lost, d.queue_drop, d.loss_drop, d.outage_drop, f.delay_s ? profileDuration(f.delay_s.mean) : "–"]);
    }
  } else {
    $("summary-title").textContent = (m.state === "ended" ? "The run has ended; at " : "Summary at ") + m.t_s.toFixed(1) + " s";
    for (const f of m.flows) {
      rows.push([f.name, f.sent, f.delivered, f.lost, f.queue_drop, f.loss_drop, f.outage_drop, f.delivered ? profileDuration(f.mean_delay_s) : "–"]);
    }
  }
  const body = $("summary").tBodies[0];
  body.textContent = "";
  for (const row of rows) {
    const finished = row[2] + row[3];
    if (finished > 0) row[3] += " (" + trim(100 * row[3] / finished) + " %)";
    const tr = document.createElement("tr");
    for (const v of row) {
      const td = document.createElement("td");
      td.textContent = v === undefined ? "–" : v;
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
}

function addEvent(e) {
  const li = document.createElement("li");
  li.textContent = e.at_s.toFixed(3) + " s  " + e.kind + (e.detail ? ": " + e.detail : "");
  $("events").prepend(li);
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const q = new URLSearchParams({ rate: rate });
  if (token) q.set("token", token);
  const ws = new WebSocket(proto + "//" + location.host + "/api/v1/stream?" + q);
  ws.onopen = () => {
    $("conn").textContent = "live, " + rate + " Hz";
    // A connection's first message brings the run's history from its
    // start: what the page had is in it.
    for (const p of Object.values(plots)) p.clear();
  };
  ws.onmessage = (ev) => onMessage(JSON.parse(ev.data));
  ws.onclose = (ev) => {
    if (hilrig.ended) {
      // Not retried: another run on this address is another page.
      $("conn").textContent = "the run has ended and its server has stopped: this page keeps what it last received";
      return;
    }
    $("conn").textContent = "disconnected" + (ev.reason ? ": " + ev.reason : "") + "; retrying";
    setTimeout(connect, 2000);
  };
}

function draw() {
  for (const p of Object.values(plots)) p.draw();
  requestAnimationFrame(draw);
}

function send(button, method, path, body, done) {
  button.disabled = true;
  api(method, path, body)
    .then((j) => say(done(j), "done"))
    .catch((e) => say(e.message, "error"))
    .finally(() => { button.disabled = false; });
}

$("hop-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const body = {};
  if ($("delay").value.trim()) body.delay = $("delay").value.trim();
  if ($("rate").value.trim()) body.rate = $("rate").value.trim();
  if ($("loss").value.trim()) body.loss = { random: $("loss").value.trim() };
  if (!Object.keys(body).length) { say("give a delay, a loss or a rate", "error"); return; }
  const hop = $("hop").value;
  send($("apply"), "PATCH", "/api/v1/hops/" + encodeURIComponent(hop), body,
    (j) => "hop " + hop + " changed at " + j.at_s.toFixed(3) + " s");
});

$("reset").addEventListener("click", () => {
  const hop = $("hop").value;
  send($("reset"), "DELETE", "/api/v1/hops/" + encodeURIComponent(hop), undefined,
    (j) => j.entries.length ? "hop " + hop + " reset to the profile at " + j.at_s.toFixed(3) + " s" : "hop " + hop + " has the profile's values");
});

$("outage-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const hop = $("hop").value;
  send($("outage"), "POST", "/api/v1/hops/" + encodeURIComponent(hop) + "/outage",
    { for: $("outage-for").value.trim(), mode: $("outage-mode").value },
    (j) => "hop " + hop + " down at " + j.at_s.toFixed(3) + " s");
});

$("phase-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const name = $("phase-name").value.trim();
  const body = {};
  if ($("phase-for").value.trim()) body.for = $("phase-for").value.trim();
  send($("phase"), "POST", "/api/v1/phases/" + encodeURIComponent(name), body,
    (j) => "phase " + name + " from " + j.at_s.toFixed(3) + " s");
});

load();
connect();
requestAnimationFrame(draw);
