// Plot draws time series on a canvas, by hand: the last `span` seconds
// of the run (Infinity: all of it), y scaled to what is shown with round
// ticks, linear or logarithmic, values written by `format`. Series are
// lines (dashed if asked), with the range of the values a point merges
// shaded about them; bands shade stretches of time (an outage, out of
// sync, a device away).
"use strict";

const palette = ["#1f6feb", "#d9480f", "#2b8a3e", "#862e9c", "#e67700", "#0b7285", "#c2255c", "#5c940d"];

class Plot {
  constructor(canvas, opts) {
    this.canvas = canvas;
    this.span = (opts && opts.span) || 60;
    this.format = (opts && opts.format) || ((v) => String(v));
    this.zero = !(opts && opts.zero === false); // include 0 on the y axis
    this.empty = (opts && opts.empty) || "waiting for data";
    this.least = (opts && opts.least) || 0; // the y axis reaches at least this high
    this.log = false; // a logarithmic y axis: values at or below 0 are not drawn
    this.series = new Map();
    this.bands = new Map();
    this.now = 0;
    this.dirty = true;
  }

  // line returns the series named key, made on first use.
  line(key, label, style) {
    let s = this.series.get(key);
    if (!s) {
      const color = (style && style.color) || palette[this.series.size % palette.length];
      s = { label: label, color: color, dash: (style && style.dash) || null, points: [] };
      this.series.set(key, s);
    }
    return s;
  }

  // put adds a point of the server's history to a series: [t, v], or
  // [t, mean, min, max] for one that merges several snapshots, or
  // [t, null] for a gap.
  put(key, label, p, style) {
    const s = this.line(key, label, style);
    s.points.push(p);
    this.now = Math.max(this.now, p[0]);
    this.bound(s.points);
    this.dirty = true;
  }

  // bound keeps a series to maxPoints, as the server keeps its history:
  // once it has more, the older half's points are merged in pairs (their
  // mean, and the range of both).
  bound(points) {
    if (points.length <= Plot.maxPoints) return;
    const half = Math.floor(points.length / 2) & ~1, merged = [];
    for (let i = 0; i < half; i += 2) merged.push(mergePoints(points[i], points[i + 1]));
    points.splice(0, half, ...merged);
  }

  // clear forgets every point: the server sends the history again.
  clear() {
    this.series.clear();
    this.bands.clear();
    this.now = 0;
    this.dirty = true;
  }

  // band marks whether key's condition holds at t.
  band(key, t, on, color) {
    let b = this.bands.get(key);
    if (!b) {
      b = { color: color || "rgba(198,40,40,.12)", spans: [], open: null };
      this.bands.set(key, b);
    }
    if (on && b.open === null) b.open = t;
    if (!on && b.open !== null) { b.spans.push([b.open, t]); b.open = null; }
    this.now = Math.max(this.now, t);
    this.dirty = true;
  }

  // points is how many points the plot holds, for tests.
  points() {
    let n = 0;
    for (const s of this.series.values()) n += s.points.length;
    return n;
  }

  // first is the earliest time the plot holds a value for, for tests.
  first() {
    let t = Infinity;
    for (const s of this.series.values()) {
      const p = s.points.find((p) => p[1] !== null);
      if (p) t = Math.min(t, p[0]);
    }
    return t;
  }

  draw() {
    if (!this.dirty) return;
    this.dirty = false;
    const c = this.canvas, dpr = window.devicePixelRatio || 1;
    const w = c.clientWidth, h = c.clientHeight;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
    }
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, w, h);
    g.font = "11px system-ui, sans-serif";

    // The last span seconds; from the start until the run is that long.
    const whole = !isFinite(this.span);
    const t0 = whole ? 0 : Math.max(0, this.now - this.span);
    const t1 = Math.max(t0 + (whole ? 10 : this.span / 6), this.now);
    const shown = (v) => v !== null && v !== undefined && (!this.log || v > 0);
    let lo = Infinity, hi = -Infinity;
    for (const s of this.series.values()) {
      for (const p of s.points) {
        if (p[0] < t0) continue;
        for (const v of [p[1], p[2], p[3]]) {
          if (!shown(v)) continue;
          lo = Math.min(lo, v);
          hi = Math.max(hi, v);
        }
      }
    }
    const left = 64, right = 18, top = 18, bottom = 18;
    const pw = w - left - right, ph = h - top - bottom;
    if (lo === Infinity) {
      g.fillStyle = "#6b6f76";
      g.fillText(this.empty, left + 8, top + ph / 2);
      return;
    }
    let ticks, y;
    if (this.log) {
      ticks = logTicks(lo, hi);
      lo = ticks[0];
      hi = ticks[ticks.length - 1];
      const l0 = Math.log10(lo), l1 = Math.log10(hi);
      y = (v) => top + (1 - (Math.log10(Math.max(v, lo)) - l0) / (l1 - l0)) * ph;
    } else {
      if (this.zero) { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
      hi = Math.max(hi, this.least);
      if (hi === lo) { hi += Math.abs(hi) * 0.1 || 1; lo -= this.zero && lo === 0 ? 0 : Math.abs(lo) * 0.1 || 1; }
      ticks = niceTicks(lo, hi, 4);
      lo = Math.min(lo, ticks[0]);
      hi = Math.max(hi, ticks[ticks.length - 1]);
      y = (v) => top + (1 - (v - lo) / (hi - lo)) * ph;
    }
    const x = (t) => left + (t - t0) / (t1 - t0) * pw;

    for (const b of this.bands.values()) {
      g.fillStyle = b.color;
      const spans = b.open === null ? b.spans : b.spans.concat([[b.open, t1]]);
      for (const [a, z] of spans) {
        if (z < t0) continue;
        g.fillRect(x(Math.max(a, t0)), top, x(z) - x(Math.max(a, t0)), ph);
      }
    }
    g.strokeStyle = "#e6e6e2";
    g.fillStyle = "#6b6f76";
    g.lineWidth = 1;
    g.setLineDash([]);
    g.textAlign = "right";
    g.textBaseline = "middle";
    for (const v of ticks) {
      const yy = Math.round(y(v)) + 0.5;
      g.beginPath(); g.moveTo(left, yy); g.lineTo(left + pw, yy); g.stroke();
      g.fillText(this.format(v), left - 6, yy);
    }
    g.textAlign = "center";
    g.textBaseline = "top";
    for (const t of timeTicks(t0, t1)) {
      if (t < t0 || t > t1) continue;
      g.fillText(runTime(t, t1 - t0), x(t), top + ph + 4);
    }
    g.save();
    g.beginPath(); g.rect(left, top, pw, ph); g.clip();
    for (const s of this.series.values()) {
      // The range of the snapshots a point merges, shaded: a peak
      // merged into a longer stretch still shows.
      g.fillStyle = s.color;
      g.globalAlpha = 0.18;
      for (let i = 1; i < s.points.length; i++) {
        const a = s.points[i - 1], b = s.points[i];
        if (b.length < 4 || a[1] === null || b[1] === null || b[0] < t0) continue;
        const lo0 = a.length > 3 ? a[2] : a[1], hi0 = a.length > 3 ? a[3] : a[1];
        if (!shown(lo0) || !shown(b[2])) continue;
        g.beginPath();
        g.moveTo(x(a[0]), y(hi0)); g.lineTo(x(b[0]), y(b[3]));
        g.lineTo(x(b[0]), y(b[2])); g.lineTo(x(a[0]), y(lo0));
        g.fill();
      }
      g.globalAlpha = 1;
      g.strokeStyle = s.color;
      g.lineWidth = 1.6;
      g.setLineDash(s.dash || []);
      g.beginPath();
      let pen = false;
      for (const [t, v] of s.points) {
        if (!shown(v)) { pen = false; continue; }
        if (pen) g.lineTo(x(t), y(v)); else g.moveTo(x(t), y(v));
        pen = true;
      }
      g.stroke();
    }
    g.restore();
    g.setLineDash([]);
    g.textAlign = "left";
    g.textBaseline = "top";
    let lx = left + 6;
    for (const s of this.series.values()) {
      if (!s.label) continue;
      g.fillStyle = s.color;
      g.fillRect(lx, 4, 10, 3);
      g.fillStyle = "#1d1f21";
      g.fillText(s.label, lx + 14, 0);
      lx += g.measureText(s.label).width + 28;
    }
  }
}

// Plot.maxPoints bounds what the page keeps of a series: as many as the
// server's history holds (3000 recent and 1000 older), twice.
Plot.maxPoints = 8000;

// mergePoints is one point for two neighbours: the later time, the mean of
// their values, the range of both.
function mergePoints(a, b) {
  if (a[1] === null) return b;
  if (b[1] === null) return [b[0], a[1], a.length > 3 ? a[2] : a[1], a.length > 3 ? a[3] : a[1]];
  const lo = Math.min(a.length > 3 ? a[2] : a[1], b.length > 3 ? b[2] : b[1]);
  const hi = Math.max(a.length > 3 ? a[3] : a[1], b.length > 3 ? b[3] : b[1]);
  return [b[0], (a[1] + b[1]) / 2, lo, hi];
}

// logTicks returns the values 1, 2 and 5 times a power of ten from the
// one at or below lo to the one at or above hi (only the powers of ten
// when that makes more than 8).
function logTicks(lo, hi) {
  if (!(hi > lo)) { hi = lo * 10; }
  const all = [];
  for (let k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k++) {
    for (const m of [1, 2, 5]) all.push(Number((m * Math.pow(10, k)).toPrecision(12)));
  }
  let from = 0, to = all.length - 1;
  while (from + 1 < all.length && all[from + 1] <= lo) from++;
  while (to - 1 >= 0 && all[to - 1] >= hi) to--;
  const ticks = all.slice(from, to + 1);
  if (ticks.length <= 8) return ticks;
  const decades = ticks.filter((v) => Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9);
  if (decades[0] > ticks[0]) decades.unshift(decades[0] / 10);
  if (decades[decades.length - 1] < ticks[ticks.length - 1]) decades.push(decades[decades.length - 1] * 10);
  return decades;
}

// timeTicks returns round instants of the run in [t0, t1]: seconds, or
// minutes and hours for longer stretches.
function timeTicks(t0, t1) {
  const span = t1 - t0;
  if (span <= 300) return niceTicks(t0, t1, 6);
  const steps = [60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400];
  const step = steps.find((s) => s >= span / 6) || 86400 * Math.ceil(span / 6 / 86400);
  const out = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) out.push(t);
  return out;
}

// runTime writes an instant of the run: in seconds over short stretches,
// else as h:mm:ss or m:ss.
function runTime(t, span) {
  if (span <= 300) return t.toFixed(t % 1 ? 1 : 0) + " s";
  const h = Math.floor(t / 3600), m = Math.floor(t % 3600 / 60), s = Math.round(t % 60);
  const two = (n) => String(n).padStart(2, "0");
  return h > 0 ? h + ":" + two(m) + ":" + two(s) : m + ":" + two(s);
}

// niceTicks returns about n round values spanning [lo, hi].
function niceTicks(lo, hi, n) {
  const raw = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || 10 * mag;
  const out = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  if (out[out.length - 1] < hi) out.push(out[out.length - 1] + step);
  return out;
}

// seconds writes a duration in a unit that suits it.
function seconds(v) {
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 1) return trim(v) + " s";
  if (a >= 1e-3) return trim(v * 1e3) + " ms";
  return trim(v * 1e6) + " µs";
}

function bytes(v) {
  if (v >= 1 << 20) return trim(v / (1 << 20)) + " MiB";
  if (v >= 1 << 10) return trim(v / (1 << 10)) + " KiB";
  return trim(v) + " B";
}

function percent(v) { return trim(v * 100) + " %"; }

function trim(v) { return String(Number(v.toPrecision(3))); }
