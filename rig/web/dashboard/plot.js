// Plot draws time series on a canvas, by hand: the last `span` seconds
// of the run, y scaled to what is shown with round ticks, values written
// by `format`. Series are lines (dashed if asked); bands shade stretches
// of time (an outage, out of sync).
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

  // add puts the point (t, v) on a series; v null leaves a gap.
  add(key, label, t, v, style) {
    const s = this.line(key, label, style);
    s.points.push([t, v]);
    this.now = Math.max(this.now, t);
    this.trim(s.points);
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

  trim(points) {
    const from = this.now - this.span;
    let i = 0;
    while (i < points.length - 1 && points[i + 1][0] < from) i++;
    if (i > 0) points.splice(0, i);
  }

  // points is how many points the plot holds, for tests.
  points() {
    let n = 0;
    for (const s of this.series.values()) n += s.points.length;
    return n;
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
    const t0 = Math.max(0, this.now - this.span), t1 = Math.max(t0 + this.span / 6, this.now);
    let lo = Infinity, hi = -Infinity;
    for (const s of this.series.values()) {
      for (const [t, v] of s.points) {
        if (v === null || t < t0) continue;
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
    }
    const left = 64, right = 18, top = 18, bottom = 18;
    const pw = w - left - right, ph = h - top - bottom;
    if (lo === Infinity) {
      g.fillStyle = "#6b6f76";
      g.fillText(this.empty, left + 8, top + ph / 2);
      return;
    }
    if (this.zero) { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
    hi = Math.max(hi, this.least);
    if (hi === lo) { hi += Math.abs(hi) * 0.1 || 1; lo -= this.zero && lo === 0 ? 0 : Math.abs(lo) * 0.1 || 1; }
    const ticks = niceTicks(lo, hi, 4);
    lo = Math.min(lo, ticks[0]);
    hi = Math.max(hi, ticks[ticks.length - 1]);
    const x = (t) => left + (t - t0) / (t1 - t0) * pw;
    const y = (v) => top + (1 - (v - lo) / (hi - lo)) * ph;

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
    for (const t of niceTicks(t0, t1, 6)) {
      if (t < t0 || t > t1) continue;
      g.fillText(t.toFixed(t % 1 ? 1 : 0) + " s", x(t), top + ph + 4);
    }
    g.save();
    g.beginPath(); g.rect(left, top, pw, ph); g.clip();
    for (const s of this.series.values()) {
      g.strokeStyle = s.color;
      g.lineWidth = 1.6;
      g.setLineDash(s.dash || []);
      g.beginPath();
      let pen = false;
      for (const [t, v] of s.points) {
        if (v === null) { pen = false; continue; }
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
