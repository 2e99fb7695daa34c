// Pliant's viewer page. The page carries everything it needs: the viewer data (JSON, positions as
// float32 little-endian in base64, one string per recorded frame), the probe CSV, the run's
// summary.json (or null) and three.js (base64, turned into blob: module URLs here, so nothing is
// fetched). window.pliantViewer exposes the state that the browser test reads.
// This text is inlined in a script element: it must never contain a "less-than slash" pair.
'use strict';

(function () {
  const api = {
    ready: false, webgl: false, frameCount: 0, frame: 0, plots: [], skippedColliders: [], error: null,
    summary: null, convergence: null, picked: null, helpers: null, exports: 0, lastExport: null, camera: null,
  };
  window.pliantViewer = api;

  const $ = (id) => document.getElementById(id);
  const data = JSON.parse($('pliant-data').textContent);
  const probesCsv = JSON.parse($('pliant-probes').textContent);
  const frames = data.frames;
  const frameCount = frames.positions.length;
  const times = frames.times_s;
  const timeStep = data.time_step_s > 0 ? data.time_step_s : (frameCount > 1 ? times[1] - times[0] : 1);
  api.frameCount = frameCount;

  $('title').textContent = 'Pliant: ' + data.scene;
  $('description').textContent = data.description || '';

  // ---------------------------------------------------------------- messages
  function showMessage(text) {
    const box = $('message');
    box.textContent = text;
    box.hidden = false;
  }
  function notice(text) {
    const p = $('notice');
    p.textContent = (p.textContent ? p.textContent + ' ' : '') + text;
    p.hidden = false;
  }
  if (frames.stride > 1) {
    notice('Frames subsampled: 1 frame in ' + frames.stride + ' of ' + (frames.last - frames.first + 1) +
      ' is shown (' + frameCount + ' frames), to keep the frame data under ' +
      Math.round(frames.budget_bytes / 1e6) + ' MB.');
  }
  function element(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // ---------------------------------------------------------------- decoding
  function bytesOf(base64) {
    const text = atob(base64.trim());
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i !== text.length; ++i) bytes[i] = text.charCodeAt(i);
    return bytes;
  }
  const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
  function floatsOf(base64) {
    const bytes = bytesOf(base64);
    if (littleEndian) return new Float32Array(bytes.buffer, 0, bytes.length / 4);
    const view = new DataView(bytes.buffer);
    const out = new Float32Array(bytes.length / 4);
    for (let i = 0; i !== out.length; ++i) out[i] = view.getFloat32(4 * i, true);
    return out;
  }
  function indicesOf(base64) {
    const bytes = bytesOf(base64);
    const view = new DataView(bytes.buffer);
    const out = new Uint32Array(bytes.length / 4);
    for (let i = 0; i !== out.length; ++i) out[i] = view.getUint32(4 * i, true);
    return out;
  }
  const cache = new Map();
  function positionsOf(index) {
    let p = cache.get(index);
    if (!p) {
      p = floatsOf(frames.positions[index]);
      cache.set(index, p);
    }
    return p;
  }
  const triangles = indicesOf(data.topology.triangles);
  const lines = indicesOf(data.topology.lines);
  const particles = data.particles;

  // The run's summary.json, when the page was given one.
  let summary = null;
  try {
    summary = JSON.parse($('pliant-summary').textContent);
  } catch (e) {
    notice('The embedded summary.json could not be read (' + e.message + ').');
  }
  if (summary !== null && (typeof summary !== 'object' || Array.isArray(summary))) summary = null;

  // ---------------------------------------------------------------- per-vertex quantities
  // Edges (unique) of the triangles and lines, with rest lengths taken from the first frame.
  const edges = (function () {
    const seen = new Set();
    const list = [];
    const add = (a, b) => {
      const key = a < b ? a * particles + b : b * particles + a;
      if (!seen.has(key)) { seen.add(key); list.push(a, b); }
    };
    for (let t = 0; t + 2 < triangles.length; t += 3) {
      add(triangles[t], triangles[t + 1]); add(triangles[t + 1], triangles[t + 2]); add(triangles[t + 2], triangles[t]);
    }
    for (let l = 0; l + 1 < lines.length; l += 2) add(lines[l], lines[l + 1]);
    return new Uint32Array(list);
  })();
  function distanceOf(p, q, a, b) {
    const dx = p[3 * a] - q[3 * b], dy = p[3 * a + 1] - q[3 * b + 1], dz = p[3 * a + 2] - q[3 * b + 2];
    return Math.sqrt(dx * dx + dy * dy + dz * dz);
  }
  const restLength = new Float32Array(edges.length / 2);
  if (frameCount > 0) {
    const p0 = positionsOf(0);
    for (let e = 0; e !== restLength.length; ++e) restLength[e] = distanceOf(p0, p0, edges[2 * e], edges[2 * e + 1]);
  }
  // Stretch of a vertex: mean relative elongation of its edges (length / rest length - 1).
  function stretchOf(index, out) {
    const p = positionsOf(index);
    const count = new Uint16Array(particles);
    out.fill(0);
    for (let e = 0; e !== restLength.length; ++e) {
      if (restLength[e] === 0) continue;
      const a = edges[2 * e], b = edges[2 * e + 1];
      const s = distanceOf(p, p, a, b) / restLength[e] - 1;
      out[a] += s; out[b] += s; ++count[a]; ++count[b];
    }
    for (let i = 0; i !== particles; ++i) if (count[i] > 0) out[i] /= count[i];
    return out;
  }
  // Speed of a vertex: distance moved since the previous recorded frame over the time between them
  // (the first frame takes the second's).
  function speedOf(index, out) {
    out.fill(0);
    if (frameCount > 1) {
      const i1 = index > 0 ? index : 1, i0 = i1 - 1;
      const p1 = positionsOf(i1), p0 = positionsOf(i0);
      const dt = times[i1] - times[i0];
      if (dt > 0) for (let i = 0; i !== particles; ++i) out[i] = distanceOf(p1, p0, i, i) / dt;
    }
    return out;
  }
  // Colour scales are fixed for the whole run (from up to 40 frames spread over it), so colours
  // compare across frames.
  const scaleCache = {};
  function scaleOf(mode) {
    if (scaleCache[mode] !== undefined) return scaleCache[mode];
    const values = new Float32Array(particles);
    let high = 0;
    const samples = Math.min(frameCount, 40);
    for (let s = 0; s !== samples; ++s) {
      const index = samples > 1 ? Math.round(s * (frameCount - 1) / (samples - 1)) : 0;
      (mode === 'stretch' ? stretchOf : speedOf)(index, values);
      for (let i = 0; i !== particles; ++i) high = Math.max(high, Math.abs(values[i]));
    }
    scaleCache[mode] = high > 0 ? high : 1;
    return scaleCache[mode];
  }
  // Colours are chosen in sRGB (as the CSS legend shows them) and handed to WebGL in linear light.
  const toLinear = (c) => (c <= 0.04045 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4));
  function setColour(rgb, out, offset) {
    for (let k = 0; k !== 3; ++k) out[offset + k] = toLinear(rgb[k]);
  }
  // Blue (compressed or still) - light grey - red (stretched or fast).
  const mixed = [0, 0, 0];
  function ramp(t, out, offset) {
    t = Math.max(-1, Math.min(1, t));
    const mid = [0.85, 0.85, 0.82], low = [0.15, 0.35, 0.9], high = [0.9, 0.2, 0.12];
    const end = t < 0 ? low : high;
    const u = Math.abs(t);
    for (let k = 0; k !== 3; ++k) mixed[k] = mid[k] + (end[k] - mid[k]) * u;
    setColour(mixed, out, offset);
  }
  function sequential(t, out, offset) {
    t = Math.max(0, Math.min(1, t));
    const stops = [[0.12, 0.2, 0.55], [0.1, 0.6, 0.65], [0.95, 0.85, 0.25], [0.9, 0.25, 0.1]];
    const x = t * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(x)), f = x - i;
    for (let k = 0; k !== 3; ++k) mixed[k] = stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f;
    setColour(mixed, out, offset);
  }
  const bodyColour = [0.89, 0.56, 0.27];

  // ---------------------------------------------------------------- numbers and axis ticks
  // "1.200e-5" -> "1.2e-5", "3e+5" -> "3e5".
  const trimExponent = (text) => text.replace(/\.?0+e/, 'e').replace('e+', 'e');
  // A number for people: 4 significant digits, exponent form outside [1e-3, 1e5).
  function formatNumber(v, digits) {
    if (typeof v !== 'number' || !Number.isFinite(v)) return String(v);
    if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
    const a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e5)) return trimExponent(v.toExponential((digits || 4) - 1));
    return String(Number(v.toPrecision(digits || 4)));
  }
  // A 1-2-5 step that cuts `span` into about `count` parts.
  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
    const f = raw / magnitude;
    return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * magnitude;
  }
  // Ticks at the multiples of a 1-2-5 step inside [low, high], labelled with the digits the step needs.
  function linearTicks(low, high, count, integer) {
    let step = niceStep(high - low, count);
    if (integer) step = Math.max(1, step);
    const first = Math.ceil(low / step - 1e-9), last = Math.floor(high / step + 1e-9);
    const stepDecade = Math.floor(Math.log10(step) + 1e-9);
    const big = Math.max(Math.abs(low), Math.abs(high));
    const exponent = big >= 1e5 || big < 1e-3;
    const ticks = [];
    for (let k = first; k <= last; ++k) {
      const value = k * step;
      let label;
      if (Math.abs(value) < step * 1e-6) label = '0';
      else if (exponent) {
        const digits = Math.max(0, Math.floor(Math.log10(Math.abs(value)) + 1e-9) - stepDecade);
        label = trimExponent(value.toExponential(Math.min(digits, 6)));
      } else label = value.toFixed(Math.max(0, Math.min(10, -stepDecade)));
      ticks.push({ value: Math.abs(value) < step * 1e-6 ? 0 : value, label });
    }
    return ticks;
  }
  // m x 10^k, written plainly between 0.001 and 10000 and as "me-k" outside.
  function decadeTick(m, k) {
    const value = m * Math.pow(10, k);
    const label = k >= -3 && k <= 4 ? String(Number(value.toPrecision(2))) : m + 'e' + k;
    return { value, label };
  }
  // Ticks of a log axis from 10^lo to 10^hi: whole decades (every 2nd, 3rd, 5th... when there are
  // many); 1-2-5 (then 1..9) times a power of ten when the range holds fewer than two decades;
  // ordinary linear ticks when even that leaves fewer than two.
  function logTicks(lo, hi, count) {
    const first = Math.ceil(lo - 1e-9), last = Math.floor(hi + 1e-9);
    if (last - first >= 1) {
      let every = 1;
      for (const e of [1, 2, 3, 4, 5, 10, 20, 50, 100]) { every = e; if ((last - first) / e <= count) break; }
      const ticks = [];
      for (let k = first; k <= last; ++k) if (((k % every) + every) % every === 0) ticks.push(decadeTick(1, k));
      if (ticks.length >= 2) return ticks;
    }
    for (const mantissas of [[1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]]) {
      const ticks = [];
      for (let k = Math.floor(lo); k <= Math.ceil(hi); ++k) {
        for (const m of mantissas) {
          const at = k + Math.log10(m);
          if (at >= lo - 1e-9 && at <= hi + 1e-9) ticks.push(decadeTick(m, k));
        }
      }
      if (ticks.length >= 2) return ticks;
    }
    return linearTicks(Math.pow(10, lo), Math.pow(10, hi), count, false).filter((t) => t.value > 0);
  }
  // Tick labels for the browser test: log axes over [10^lo, 10^hi], linear ones over [low, high].
  api.tickLabels = {
    log: (lo, hi, count) => logTicks(lo, hi, count || 4).map((t) => t.label),
    linear: (low, high, count) => linearTicks(low, high, count || 4, false).map((t) => t.label),
  };

  // ---------------------------------------------------------------- convergence (summary.json)
  // summary.convergence = { converged, measure, threshold, worst_strain_residual, worst_relative_residual,
  // unconverged_frames: [[first, last], ...] (frame numbers, inclusive), advice }: the threshold is
  // on the strain residual when `measure` says so (older summaries: on the relative residual).
  // Malformed stretches are left out.
  const convergence = (function () {
    const c = summary && summary.convergence;
    if (!c || typeof c !== 'object') return null;
    const stretches = [];
    if (Array.isArray(c.unconverged_frames)) {
      for (const r of c.unconverged_frames) {
        if (Array.isArray(r) && r.length === 2 && Number.isFinite(r[0]) && Number.isFinite(r[1]) && r[1] >= r[0]) stretches.push([r[0], r[1]]);
      }
    }
    return {
      converged: c.converged === true, threshold: c.threshold,
      measure: c.measure === 'strain_residual' ? 'strain residual' : 'relative residual',
      worst: c.measure === 'strain_residual' ? c.worst_strain_residual : c.worst_relative_residual,
      advice: typeof c.advice === 'string' ? c.advice : '', stretches,
    };
  })();
  // Time of simulated frame n (frames are one time step apart; recorded ones may be subsampled).
  const frameTime = (n) => (frameCount > 0 ? times[0] + (n - frames.numbers[0]) * timeStep : n * timeStep);
  // A stretch of frames covers half a step on either side of its frames' times.
  const shadedTimes = convergence ? convergence.stretches.map(([a, b]) => [frameTime(a) - timeStep / 2, frameTime(b) + timeStep / 2]) : [];
  const unconvergedAt = (n) => !!convergence && convergence.stretches.some(([a, b]) => n >= a && n <= b);
  function showConvergence() {
    if (!convergence) return;
    const box = $('convergence');
    box.hidden = false;
    const frameCountOf = convergence.stretches.reduce((sum, [a, b]) => sum + b - a + 1, 0);
    const residual = 'worst ' + convergence.measure + ' ' + formatNumber(convergence.worst) +
      (convergence.threshold !== undefined ? ' (threshold ' + formatNumber(convergence.threshold) + ')' : '');
    if (convergence.converged && frameCountOf === 0) {
      box.className = 'good';
      box.appendChild(element('strong', '', 'Converged'));
      box.appendChild(document.createTextNode('The solver met its tolerance in every frame: ' + residual + '.'));
    } else {
      box.className = 'bad';
      const simulated = Math.max(1, frames.last - frames.first);
      box.appendChild(element('strong', '', 'Not converged in ' + frameCountOf + ' of ' + simulated + ' frames'));
      const list = convergence.stretches.slice(0, 8).map(([a, b]) => (a === b ? String(a) : a + '–' + b)).join(', ') +
        (convergence.stretches.length > 8 ? ' and ' + (convergence.stretches.length - 8) + ' more' : '');
      const line = element('div');
      line.appendChild(element('span', 'swatch'));
      line.appendChild(document.createTextNode('Shaded on the plots' + (list ? ': frames ' + list : '') + '; ' + residual + '.'));
      box.appendChild(line);
    }
    if (convergence.advice) box.appendChild(element('p', 'advice', convergence.advice));
  }

  // ---------------------------------------------------------------- summary panel
  const unitSuffixes = [[/_m_s2$/, 'm/s²'], [/_m_s$/, 'm/s'], [/_kg$/, 'kg'], [/_J$/, 'J'], [/_N$/, 'N'], [/_m$/, 'm'], [/_s$/, 's']];
  const specialLabels = {
    ms_per_frame: ['time per frame', 'ms'], ns_per_projection: ['time per projection', 'ns'],
    simulate_s: ['simulating', 's'], write_s: ['writing output', 's'], time_s: ['simulated time', 's'],
    worst_relative_residual: ['worst relative residual', ''], worst_strain_residual: ['worst strain residual', ''],
    unconverged_frames: ['unconverged frames', ''],
    final_intersecting_triangle_pairs: ['intersecting pairs (end)', ''], first_frame: ['first frame', ''],
    frames: ['run to frame', ''], last_frame: ['last frame simulated', ''], viewer_frame_stride: ['viewer frame stride', ''],
  };
  // 'time_step_s' -> ['time step', 's'].
  function labelOf(key) {
    if (specialLabels[key]) return specialLabels[key];
    for (const [pattern, unit] of unitSuffixes) if (pattern.test(key)) return [key.replace(pattern, '').replace(/_/g, ' '), unit];
    return [key.replace(/_/g, ' '), ''];
  }
  function valueText(value, unit) {
    const withUnit = (text) => text + (unit ? ' ' + unit : '');
    if (value === null || value === undefined) return '–';
    if (typeof value === 'boolean') return value ? 'yes' : 'no';
    if (typeof value === 'number') return withUnit(formatNumber(value));
    if (typeof value === 'string') return value;
    if (Array.isArray(value)) {
      if (value.every((v) => typeof v === 'number')) return withUnit('(' + value.map((v) => formatNumber(v)).join(', ') + ')');
      if (value.every((v) => Array.isArray(v) && v.length === 2)) return value.map(([a, b]) => (a === b ? String(a) : a + '–' + b)).join(', ') || 'none';
    }
    return JSON.stringify(value);
  }
  // One card per object of summary.json (scalars of the top level together in "Run"), known ones
  // first; an object inside a card becomes "parent / child" rows.
  function buildSummary() {
    if (!summary) return;
    $('summary').hidden = false;
    $('summary-raw').querySelector('pre').textContent = JSON.stringify(summary, null, 2);
    const cards = $('summary-cards');
    const titles = {
      convergence: 'Convergence', settings: 'Solver settings', timings: 'Timings', final_residual: 'Final residual',
      final_energy_J: 'Final energy', constraints: 'Constraints', outputs: 'Outputs',
    };
    const addCard = (title, rows, className, note) => {
      const card = element('div', 'card' + (className ? ' ' + className : ''));
      card.appendChild(element('h3', '', title));
      const table = element('table');
      for (const [label, text, isText] of rows) {
        const tr = element('tr');
        tr.appendChild(element('th', '', label));
        tr.appendChild(element('td', isText ? 'text' : '', text));
        table.appendChild(tr);
      }
      card.appendChild(table);
      if (note) card.appendChild(element('p', 'note', note));
      cards.appendChild(card);
      return card;
    };
    const rowsOf = (object, inheritedUnit, prefix) => {
      const rows = [];
      for (const [key, value] of Object.entries(object)) {
        const [label, unit] = labelOf(key);
        if (value && typeof value === 'object' && !Array.isArray(value)) rows.push(...rowsOf(value, unit || inheritedUnit, prefix + label + ' / '));
        else rows.push([prefix + label, valueText(value, unit || inheritedUnit), typeof value === 'string' && value.length > 24]);
      }
      return rows;
    };
    const run = [];
    const runOrder = ['scene', 'description', 'source', 'status', 'first_frame', 'frames', 'last_frame', 'time_s', 'particles', 'final_intersecting_triangle_pairs', 'state_hash'];
    const scalarKeys = Object.keys(summary).filter((k) => !(summary[k] && typeof summary[k] === 'object' && !Array.isArray(summary[k])));
    scalarKeys.sort((a, b) => (runOrder.indexOf(a) + 1 || 99) - (runOrder.indexOf(b) + 1 || 99));
    for (const key of scalarKeys) {
      const [label, unit] = labelOf(key);
      run.push([label, valueText(summary[key], unit), typeof summary[key] === 'string' && summary[key].length > 24]);
    }
    if (run.length > 0) addCard('Run', run);
    const objectOrder = ['convergence', 'settings', 'timings', 'final_residual', 'final_energy_J', 'constraints', 'outputs'];
    const objectKeys = Object.keys(summary).filter((k) => !scalarKeys.includes(k));
    objectKeys.sort((a, b) => (objectOrder.indexOf(a) + 1 || 99) - (objectOrder.indexOf(b) + 1 || 99) || (a < b ? -1 : 1));
    for (const key of objectKeys) {
      const object = summary[key];
      const [label, unit] = labelOf(key);
      const title = titles[key] || label.charAt(0).toUpperCase() + label.slice(1);
      if (key === 'constraints') {
        const counts = Object.entries(object).filter(([, n]) => typeof n === 'number');
        const shown = counts.filter(([, n]) => n !== 0);
        const rows = shown.map(([family, n]) => [family, valueText(n, '')]);
        rows.push(['total', valueText(counts.reduce((s, [, n]) => s + n, 0), '')]);
        addCard(title, rows, '', counts.length > shown.length ? 'Families without constraints are left out.' : '');
      } else if (key === 'convergence') {
        const rows = rowsOf(Object.fromEntries(Object.entries(object).filter(([k]) => k !== 'advice')), '', '');
        addCard(title, rows, convergence && convergence.converged && convergence.stretches.length === 0 ? 'good' : 'bad',
          typeof object.advice === 'string' ? object.advice : '');
      } else {
        addCard(title + (unit ? ' (' + unit + ')' : ''), rowsOf(object, unit, ''));
      }
    }
    api.summary = { cards: cards.children.length, text: cards.textContent };
  }

  // ---------------------------------------------------------------- plots
  function parseCsv(text) {
    const rows = text.trim().split(/\r?\n/);
    if (rows.length < 2) return null;
    const header = rows[0].split(',');
    const columns = header.map(() => []);
    for (let r = 1; r !== rows.length; ++r) {
      const cells = rows[r].split(',');
      for (let c = 0; c !== header.length; ++c) columns[c].push(Number(cells[c]));
    }
    return { header, columns };
  }
  const red = '#e8766a', green = '#7bd17b', blue = '#4fb3e8', orange = '#f0a53a', violet = '#c792ea', yellow = '#e8d36a', white = '#e3e6ea';
  const palette = [orange, blue, green, red, violet, yellow];
  const xyzColours = { x: red, y: green, z: blue };
  const plots = [];
  // A plot of series over time: title, unit, legend with the value at the cursor. Drawn by drawPlot.
  function makePlot(container, spec) {
    const box = element('div', 'plot');
    const title = element('h3', '', spec.title);
    const unit = spec.unit + (spec.logScale ? (spec.unit ? ', ' : '') + 'log scale' + (spec.zeros ? ', zeros left out' : '') : '');
    if (unit) { title.appendChild(document.createTextNode(' ')); title.appendChild(element('span', 'muted', '(' + unit + ')')); }
    const canvas = element('canvas');
    const keys = element('div', 'keys');
    const readouts = spec.series.map((s) => {
      const key = element('span');
      const swatch = element('i', s.dashed ? 'dashed' : '');
      swatch.style.background = s.colour;
      swatch.style.borderColor = s.colour;
      key.appendChild(swatch);
      key.appendChild(document.createTextNode(s.name));
      const value = element('b');
      key.appendChild(value);
      keys.appendChild(key);
      return value;
    });
    box.appendChild(title); box.appendChild(canvas); box.appendChild(keys);
    if (spec.note) box.appendChild(element('p', 'hint', spec.note));
    container.appendChild(box);
    const entry = {
      name: spec.probe, kind: spec.kind, quantity: spec.quantity, title: box.querySelector('h3').textContent,
      unit: spec.unit, series: spec.series.length, points: spec.time.length, logScale: !!spec.logScale, ticks: [], shaded: [],
    };
    const plot = { ...spec, box, canvas, readouts, entry, drawn: 0 };
    return plot;
  }
  // Probe kinds follow from their CSV columns (include/pliant/io/scenes.h, struct Probe).
  const probeKinds = {
    'kinetic gravitational elastic total': 'energy', 'max rms': 'residual', 'force': 'force',
    'x y z vx vy vz': 'particle', 'px py pz Lx Ly Lz': 'momentum', 'x y z': 'centre of mass', 'pairs': 'intersections',
  };
  const kindOrder = ['energy', 'residual', 'force', 'intersections', 'particle', 'centre of mass', 'momentum', 'probe'];
  // The plots of one probe: [quantity, title, unit, columns, colours, options].
  function plotsOfProbe(name, kind, series) {
    const pick = (names) => names.map((n) => series.find((s) => s.column === n));
    const xyz = (names) => pick(names).map((s) => ({ ...s, colour: xyzColours[s.column.slice(-1).toLowerCase()] }));
    switch (kind) {
      case 'energy': {
        const colours = { kinetic: orange, gravitational: blue, elastic: green, total: white };
        // The total is dashed and drawn last, so a component it coincides with stays visible.
        // Elastic is ½αf² of the forces the solver applied (include/pliant/diagnostics.h): bounded by
        // them when a solve is unconverged, unlike C²/2α of the positions.
        const names = { elastic: 'elastic ½αf²' };
        return [{ quantity: 'energy', title: 'energy', unit: 'J',
          note: 'total = kinetic + gravitational + elastic, where elastic is ½αf² of the constraint forces f the solver ' +
            'applied (α: compliance). Damping, friction and contacts take energy out, so over a run the total falls; a steady ' +
            'rise would mean an instability.',
          series: pick(['kinetic', 'gravitational', 'elastic', 'total']).map((s) => ({ ...s, name: names[s.column] || s.name,
            colour: colours[s.column], dashed: s.column === 'total' })) }];
      }
      case 'residual':
        return [{ quantity: 'residual', title: 'constraint residual |C + α̃λ|', unit: 'm for distance constraints',
          series: pick(['max', 'rms']).map((s, k) => ({ ...s, colour: [orange, violet][k] })), logScale: true }];
      case 'force':
        return [{ quantity: 'force', title: 'constraint force λ/h²', unit: 'N', series: [{ ...series[0], colour: orange }] }];
      case 'intersections':
        return [{ quantity: 'intersections', title: 'intersecting triangle pairs', unit: 'count',
          series: [{ ...series[0], colour: yellow }], integer: true }];
      case 'particle':
        return [{ quantity: 'position', title: 'particle position', unit: 'm', series: xyz(['x', 'y', 'z']) },
          { quantity: 'velocity', title: 'particle velocity', unit: 'm/s', series: xyz(['vx', 'vy', 'vz']) }];
      case 'centre of mass':
        return [{ quantity: 'position', title: 'centre of mass', unit: 'm', series: xyz(['x', 'y', 'z']) }];
      case 'momentum':
        return [{ quantity: 'linear momentum', title: 'linear momentum', unit: 'kg m/s', series: xyz(['px', 'py', 'pz']) },
          { quantity: 'angular momentum', title: 'angular momentum about the origin', unit: 'kg m²/s', series: xyz(['Lx', 'Ly', 'Lz']) }];
      default:
        return [{ quantity: 'values', title: 'values', unit: '', series: series.map((s, k) => ({ ...s, colour: palette[k % palette.length] })) }];
    }
  }
  // The solve's strain residual after every simulated frame (viewer-data.json's convergence), with
  // the threshold above which a frame counts as far from converged: present on every page of a run,
  // probes or not.
  function buildConvergencePlot() {
    const c = data.convergence;
    if (!c || !Array.isArray(c.strain_residual) || c.strain_residual.length === 0 || !Number.isFinite(c.first_frame)) return;
    const values = c.strain_residual.map((v) => (typeof v === 'number' ? v : NaN));
    const time = values.map((_, k) => frameTime(c.first_frame + k));
    const series = [{ name: 'strain residual', values, colour: violet }];
    if (Number.isFinite(c.threshold)) series.push({ name: 'far from converged above', values: values.map(() => c.threshold), colour: red, dashed: true });
    const plot = makePlot($('probe-plots'), { quantity: 'strain residual', title: 'solver convergence: strain residual',
      unit: 'dimensionless', series, time, probe: 'solver', kind: 'convergence', fromZero: true,
      note: 'After each frame, the RMS over the constraints of the largest move that would remove the residual ' +
        'r = C + α̃λ, over half the constraint\'s size (for a distance constraint, the stretch its compliance does ' +
        'not explain over its length): 0 when converged; above the dashed line the shapes are visibly off.' });
    plots.push(plot);
    api.plots.push(plot.entry);
  }
  function buildProbePlots() {
    const table = parseCsv(probesCsv || '');
    const container = $('probe-plots');
    if (!table || table.header[0] !== 'time') {
      container.appendChild(element('p', 'hint',
        'This scene records no probes (add "probes" to the scene file to plot energy, residual or forces).'));
      return;
    }
    const time = table.columns[0];
    const groups = new Map();
    for (let c = 1; c !== table.header.length; ++c) {
      const header = table.header[c];
      const dot = header.lastIndexOf('.');
      const probe = dot > 0 ? header.slice(0, dot) : header, column = dot > 0 ? header.slice(dot + 1) : header;
      if (!groups.has(probe)) groups.set(probe, []);
      groups.get(probe).push({ column, name: column, values: table.columns[c] });
    }
    const probes = [...groups.entries()].map(([name, series]) => ({ name, series, kind: probeKinds[series.map((s) => s.column).join(' ')] || 'probe' }));
    probes.sort((a, b) => kindOrder.indexOf(a.kind) - kindOrder.indexOf(b.kind));
    for (const { name, series, kind } of probes) {
      for (const spec of plotsOfProbe(name, kind, series)) {
        // A log axis needs positive values; zeros (a residual at rest) are left out of it, negatives forbid it.
        const logScale = !!spec.logScale && spec.series.every((s) => s.values.every((v) => v >= 0)) &&
          spec.series.some((s) => s.values.some((v) => v > 0));
        const zeros = logScale && spec.series.some((s) => s.values.some((v) => v === 0));
        const title = spec.title.toLowerCase().includes(name.toLowerCase()) ? spec.title : name + ': ' + spec.title;
        const plot = makePlot(container, { ...spec, title, logScale, zeros, probe: name, kind, time });
        plots.push(plot);
        api.plots.push(plot.entry);
      }
    }
  }
  // The picked particle: position components and speed over the recorded frames.
  let pickedPlots = null;
  function showPickedParticle(index) {
    const group = $('picked');
    if (index < 0) {
      group.hidden = true;
      api.picked = null;
      return;
    }
    const track = [0, 1, 2].map(() => new Float64Array(frameCount));
    const velocity = [0, 1, 2].map(() => new Float64Array(frameCount)), speed = new Float64Array(frameCount);
    for (let f = 0; f !== frameCount; ++f) {
      const p = positionsOf(f);
      for (let k = 0; k !== 3; ++k) track[k][f] = p[3 * index + k];
    }
    // Velocity: displacement since the previous recorded frame over the time between them (the first
    // frame takes the second's), as the speed colouring.
    for (let f = 1; f < frameCount; ++f) {
      const dt = times[f] - times[f - 1];
      for (let k = 0; k !== 3; ++k) velocity[k][f] = dt > 0 ? (track[k][f] - track[k][f - 1]) / dt : 0;
      speed[f] = Math.hypot(velocity[0][f], velocity[1][f], velocity[2][f]);
    }
    if (frameCount > 1) {
      for (let k = 0; k !== 3; ++k) velocity[k][0] = velocity[k][1];
      speed[0] = speed[1];
    }
    const colourOf = [red, green, blue];
    const position = ['x', 'y', 'z'].map((name, k) => ({ name, values: track[k], colour: colourOf[k] }));
    const velocities = ['vx', 'vy', 'vz'].map((name, k) => ({ name, values: velocity[k], colour: colourOf[k] }));
    const speeds = [{ name: 'speed', values: speed, colour: orange }];
    const series = [position, velocities, speeds];
    if (!pickedPlots) {
      const plot = (title, unit, k) => makePlot(group, { title, unit, series: series[k], time: times, probe: 'picked',
        kind: 'picked particle', quantity: title });
      pickedPlots = [plot('position', 'm', 0), plot('velocity', 'm/s', 1), plot('speed', 'm/s', 2)];
    } else {
      pickedPlots.forEach((p, k) => { p.series = series[k]; });
    }
    group.hidden = false;
    $('picked-title').textContent = 'Particle ' + index;
    api.picked = { index, plots: pickedPlots.map((p) => p.entry) };
  }

  function drawPlot(plot, cursorTime) {
    const canvas = plot.canvas;
    if (canvas.clientWidth === 0) return;  // hidden
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(100, canvas.clientWidth), height = Math.max(60, canvas.clientHeight);
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(height * ratio)) {
      canvas.width = Math.round(width * ratio); canvas.height = Math.round(height * ratio);
    }
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const map = (v) => (plot.logScale ? Math.log10(v) : v);
    let low = Infinity, high = -Infinity;
    for (const s of plot.series) for (const v of s.values) { const m = map(v); if (Number.isFinite(m)) { if (m < low) low = m; if (m > high) high = m; } }
    if (!Number.isFinite(low)) { low = 0; high = 1; }
    if (high - low <= 1e-12 * Math.max(1, Math.abs(high))) {
      const spread = plot.integer ? 1 : plot.logScale ? 0.5 : Math.abs(high) > 0 ? 0.1 * Math.abs(high) : 1;
      low -= spread; high += spread;
    } else {
      const pad = 0.05 * (high - low);
      low -= pad; high += pad;
    }
    if (plot.integer && low < 0 && plot.series.every((s) => s.values.every((v) => v >= 0))) low = Math.min(-0.05 * high, 0);
    if (plot.fromZero) { low = Math.min(low, 0); high = Math.max(high, low + 1e-12); }  // 0 (converged) in view
    const yTicks = plot.logScale ? logTicks(low, high, 4) : linearTicks(low, high, 4, plot.integer);
    g.font = '11px system-ui, sans-serif';
    const labelWidth = Math.max(24, ...yTicks.map((t) => g.measureText(t.label).width));
    const left = Math.ceil(labelWidth) + 10, right = 10, top = 6, bottom = 18;
    const t0 = plot.time[0], t1 = plot.time[plot.time.length - 1] > t0 ? plot.time[plot.time.length - 1] : t0 + 1;
    const x = (t) => left + (t - t0) / (t1 - t0) * (width - left - right);
    const y = (v) => top + (1 - (map(v) - low) / (high - low)) * (height - top - bottom);
    // Unconverged stretches (summary.json's convergence section), at least 2 pixels wide.
    plot.entry.shaded = [];
    g.fillStyle = 'rgba(232, 118, 106, 0.24)';
    for (const [ta, tb] of shadedTimes) {
      if (tb < t0 || ta > t1) continue;
      let xa = x(Math.max(ta, t0)), xb = x(Math.min(tb, t1));
      if (xb - xa < 2) { const mid = (xa + xb) / 2; xa = mid - 1; xb = mid + 1; }
      g.fillRect(xa, top, xb - xa, height - top - bottom);
      plot.entry.shaded.push([xa, xb]);
    }
    // Grid and tick labels.
    g.strokeStyle = '#353c45'; g.lineWidth = 1;
    g.fillStyle = '#98a1ab';
    g.textAlign = 'right'; g.textBaseline = 'middle';
    for (const t of yTicks) {
      const at = Math.round(y(t.value)) + 0.5;
      g.beginPath(); g.moveTo(left, at); g.lineTo(width - right, at); g.stroke();
      g.fillText(t.label, left - 5, at);
    }
    const xTicks = linearTicks(t0, t1, Math.max(2, Math.floor((width - left - right) / 80)), false);
    g.textBaseline = 'alphabetic';
    xTicks.forEach((t, k) => {
      const at = Math.round(x(t.value)) + 0.5;
      g.beginPath(); g.moveTo(at, top); g.lineTo(at, height - bottom); g.stroke();
      g.textAlign = k === 0 && at - left < 12 ? 'left' : k === xTicks.length - 1 && width - right - at < 16 ? 'right' : 'center';
      g.fillText(t.label + (k === xTicks.length - 1 ? ' s' : ''), at, height - 4);
    });
    g.strokeStyle = '#4a525c';
    g.strokeRect(left + 0.5, top + 0.5, width - left - right - 1, height - top - bottom - 1);
    plot.entry.ticks = yTicks.map((t) => t.label);
    plot.entry.xTicks = xTicks.map((t) => t.label);
    // Series (thinned to about two points per pixel).
    const n = plot.time.length;
    const step = Math.max(1, Math.floor(n / (2 * width)));
    g.save();
    g.beginPath(); g.rect(left, top, width - left - right, height - top - bottom); g.clip();
    for (const s of plot.series) {
      g.strokeStyle = s.colour; g.lineWidth = s.dashed ? 2 : 1.5;
      g.setLineDash(s.dashed ? [6, 4] : []);
      g.beginPath();
      let started = false;
      for (let i = 0; i < n; i += step) {
        const v = s.values[i];
        if (!Number.isFinite(map(v))) { started = false; continue; }
        if (started) g.lineTo(x(plot.time[i]), y(v)); else { g.moveTo(x(plot.time[i]), y(v)); started = true; }
      }
      g.stroke();
    }
    g.restore();
    g.setLineDash([]);
    if (cursorTime !== undefined) {
      g.strokeStyle = '#e3e6ea'; g.lineWidth = 1; g.setLineDash([3, 3]);
      const at = Math.round(x(cursorTime)) + 0.5;
      g.beginPath(); g.moveTo(at, top); g.lineTo(at, height - bottom); g.stroke();
      g.setLineDash([]);
      // Values at the cursor in the legend.
      let lo = 0, hi = n - 1;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (plot.time[mid] <= cursorTime + 1e-12) lo = mid; else hi = mid - 1; }
      plot.series.forEach((s, k) => { plot.readouts[k].textContent = formatNumber(s.values[lo]); });
    }
    plot.drawn += 1;
  }
  function drawPlots(cursorTime) {
    for (const plot of plots) drawPlot(plot, cursorTime);
    if (pickedPlots && !$('picked').hidden) for (const plot of pickedPlots) drawPlot(plot, cursorTime);
    api.plotsDrawnAt = cursorTime;
  }

  // ---------------------------------------------------------------- the 3D view
  function webglAvailable() {
    try {
      const probe = document.createElement('canvas');
      return !!(probe.getContext('webgl2') || probe.getContext('webgl'));
    } catch (e) {
      return false;
    }
  }

  async function loadThree() {
    const decoder = new TextDecoder();
    const url = (text) => URL.createObjectURL(new Blob([text], { type: 'text/javascript' }));
    const coreUrl = url(decoder.decode(bytesOf($('three-core').textContent)));
    const moduleText = decoder.decode(bytesOf($('three-module').textContent)).split("'./three.core.js'").join(JSON.stringify(coreUrl));
    return import(url(moduleText));
  }

  // Bounds of the simulated particles over the run (up to 64 recorded frames spread over it), so the
  // camera frames what moves, not an infinite plane or a large collider; `points` keeps up to about
  // 20000 of the positions seen, which the camera fits in its view.
  function runBounds() {
    const low = [Infinity, Infinity, Infinity], high = [-Infinity, -Infinity, -Infinity];
    const samples = Math.min(frameCount, 64);
    const every = Math.max(1, Math.ceil(samples * particles / 20000));
    const points = [];
    for (let s = 0; s < samples; ++s) {
      const p = positionsOf(samples > 1 ? Math.round(s * (frameCount - 1) / (samples - 1)) : 0);
      for (let i = 0; i < particles; ++i) {
        const x = p[3 * i], y = p[3 * i + 1], z = p[3 * i + 2];
        if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) continue;
        low[0] = Math.min(low[0], x); low[1] = Math.min(low[1], y); low[2] = Math.min(low[2], z);
        high[0] = Math.max(high[0], x); high[1] = Math.max(high[1], y); high[2] = Math.max(high[2], z);
        if ((s * particles + i) % every === 0) points.push(x, y, z);
      }
      // Rigid bodies by their shape frames' origins.
      for (const b of data.bodies || []) {
        const pose = b.poses[Math.min(samples > 1 ? Math.round(s * (frameCount - 1) / (samples - 1)) : 0, b.poses.length - 1)];
        if (!pose) continue;
        for (let k = 0; k < 3; ++k) { low[k] = Math.min(low[k], pose[k]); high[k] = Math.max(high[k], pose[k]); }
        points.push(pose[0], pose[1], pose[2]);
      }
    }
    if (!Number.isFinite(low[0])) return { low: [-0.5, -0.5, -0.5], high: [0.5, 0.5, 0.5], centre: [0, 0, 0], size: [1, 1, 1], radius: 0.87, points: [] };
    const size = [0, 1, 2].map((k) => high[k] - low[k]);
    const centre = [0, 1, 2].map((k) => (low[k] + high[k]) / 2);
    const radius = Math.max(0.05, Math.hypot(size[0], size[1], size[2]) / 2);
    return { low, high, centre, size, radius, points };
  }

  // A vertical gradient behind the scene (screen-filling background texture).
  function gradientTexture(THREE, top, bottom) {
    const c = document.createElement('canvas');
    c.width = 4; c.height = 256;
    const g = c.getContext('2d');
    const gradient = g.createLinearGradient(0, 0, 0, 256);
    gradient.addColorStop(0, top); gradient.addColorStop(1, bottom);
    g.fillStyle = gradient; g.fillRect(0, 0, 4, 256);
    const texture = new THREE.CanvasTexture(c);
    texture.colorSpace = THREE.SRGBColorSpace;
    return texture;
  }
  // A square grid of half-width `half` and cell `cell` in the local x-z plane, fading out towards its
  // edge (vertex alpha), so it reads as a floor without a hard border.
  function fadingGrid(THREE, half, cell, colour, opacity) {
    const n = Math.max(1, Math.round(half / cell));
    const points = [], alphas = [];
    const fade = (u, v) => opacity * Math.max(0, 1 - Math.pow(Math.hypot(u, v) / (n * cell), 2));
    for (let i = -n; i <= n; ++i) {
      for (let j = -n; j < n; ++j) {
        points.push(i * cell, 0, j * cell, i * cell, 0, (j + 1) * cell);
        alphas.push(fade(i * cell, j * cell), fade(i * cell, (j + 1) * cell));
        points.push(j * cell, 0, i * cell, (j + 1) * cell, 0, i * cell);
        alphas.push(fade(j * cell, i * cell), fade((j + 1) * cell, i * cell));
      }
    }
    const c = new THREE.Color(colour);
    const colours = new Float32Array(alphas.length * 4);
    alphas.forEach((a, k) => { colours[4 * k] = c.r; colours[4 * k + 1] = c.g; colours[4 * k + 2] = c.b; colours[4 * k + 3] = a; });
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.Float32BufferAttribute(points, 3));
    geometry.setAttribute('color', new THREE.BufferAttribute(colours, 4));
    return new THREE.LineSegments(geometry, new THREE.LineBasicMaterial({ vertexColors: true, transparent: true, depthWrite: false }));
  }
  function radialAlphaTexture(THREE) {
    const c = document.createElement('canvas');
    c.width = c.height = 128;
    const g = c.getContext('2d');
    const gradient = g.createRadialGradient(64, 64, 0, 64, 64, 64);
    gradient.addColorStop(0, '#fff'); gradient.addColorStop(0.6, '#fff'); gradient.addColorStop(1, '#000');
    g.fillStyle = gradient; g.fillRect(0, 0, 128, 128);
    return new THREE.CanvasTexture(c);
  }
  function textSprite(THREE, text, colour, size) {
    const c = document.createElement('canvas');
    c.width = c.height = 64;
    const g = c.getContext('2d');
    g.font = 'bold 44px system-ui, sans-serif'; g.textAlign = 'center'; g.textBaseline = 'middle';
    g.fillStyle = colour; g.fillText(text, 32, 34);
    const texture = new THREE.CanvasTexture(c);
    texture.colorSpace = THREE.SRGBColorSpace;
    const sprite = new THREE.Sprite(new THREE.SpriteMaterial({ map: texture, transparent: true, depthWrite: false }));
    sprite.scale.set(size, size, 1);
    return sprite;
  }
  // x, y and z arrows (red, green, blue, as in the plots) of length `length` at `origin`.
  function axesArrows(THREE, origin, length) {
    const group = new THREE.Group();
    const colours = [0xe0605a, 0x6cc06c, 0x4a9be0];
    const radius = length * 0.015;
    ['x', 'y', 'z'].forEach((name, k) => {
      const material = new THREE.MeshBasicMaterial({ color: colours[k] });
      const shaft = new THREE.Mesh(new THREE.CylinderGeometry(radius, radius, length * 0.82, 10), material);
      shaft.position.y = length * 0.41;
      const head = new THREE.Mesh(new THREE.ConeGeometry(radius * 3, length * 0.18, 14), material);
      head.position.y = length * 0.91;
      const arrow = new THREE.Group();
      arrow.add(shaft, head);
      if (k === 0) arrow.rotation.z = -Math.PI / 2;
      if (k === 2) arrow.rotation.x = Math.PI / 2;
      group.add(arrow);
      const label = textSprite(THREE, name, '#' + colours[k].toString(16).padStart(6, '0'), length * 0.22);
      label.position.set(k === 0 ? length * 1.15 : 0, k === 1 ? length * 1.15 : 0, k === 2 ? length * 1.15 : 0);
      group.add(label);
    });
    group.position.copy(origin);
    return group;
  }

  async function start3d() {
    const THREE = await loadThree();
    const canvas = $('scene');
    const renderer = new THREE.WebGLRenderer({ canvas, antialias: true });
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    renderer.shadowMap.enabled = true;
    renderer.shadowMap.type = THREE.PCFShadowMap;
    const scene = new THREE.Scene();
    scene.background = gradientTexture(THREE, '#56616e', '#1f242b');
    const camera = new THREE.PerspectiveCamera(40, 4 / 3, 0.01, 1000);
    const bounds = runBounds();
    const centre = new THREE.Vector3(...bounds.centre);
    const R = bounds.radius;

    // Default view: a 3/4 view from above, facing the broader of the bounds' vertical sides.
    // Motion in a vertical plane (a rope swinging) is seen nearly face on, so a thin object fills the view.
    const broad = Math.max(bounds.size[0], bounds.size[2]);
    const planar = Math.min(bounds.size[0], bounds.size[2]) < 0.1 * broad;
    const turn = planar ? 0.25 : 0.6;
    const azimuth = bounds.size[2] <= bounds.size[0] ? turn : Math.PI / 2 - turn;
    const flat = bounds.size[1] < 0.2 * broad;
    const elevation = flat ? 0.7 : planar ? 0.3 : 0.45;

    // Lights: sky/ground fill, a key light above the default view's left shoulder (casting
    // shadows framed on the bounds), a cool rim light from behind and a weak light at the camera,
    // so that a surface seen from below is not black.
    scene.add(new THREE.HemisphereLight(0xe4ecf7, 0x8a8072, 1.3));
    const headlight = new THREE.DirectionalLight(0xffffff, 0.8);
    headlight.position.set(0, 0, 1);
    headlight.target.position.set(0, 0, -1);
    camera.add(headlight, headlight.target);
    scene.add(camera);
    const key = new THREE.DirectionalLight(0xfff4e6, 2.2);
    const keyDirection = new THREE.Vector3(Math.sin(azimuth - 0.9) * Math.cos(1.0), Math.sin(1.0), Math.cos(azimuth - 0.9) * Math.cos(1.0));
    key.position.copy(centre).addScaledVector(keyDirection, 4 * R);
    key.target.position.copy(centre);
    key.castShadow = true;
    key.shadow.mapSize.set(2048, 2048);
    Object.assign(key.shadow.camera, { left: -1.6 * R, right: 1.6 * R, top: 1.6 * R, bottom: -1.6 * R, near: 0.5 * R, far: 9 * R });
    key.shadow.bias = -0.0004;
    key.shadow.normalBias = 0.004 * R;
    scene.add(key, key.target);
    const rim = new THREE.DirectionalLight(0xbcd0ff, 0.7);
    rim.position.copy(centre).add(new THREE.Vector3(-Math.sin(azimuth) * 3 * R, 2 * R, -Math.cos(azimuth) * 3 * R));
    rim.target.position.copy(centre);
    scene.add(rim, rim.target);

    const positions = new THREE.BufferAttribute(new Float32Array(particles * 3), 3);
    positions.setUsage(THREE.DynamicDrawUsage);
    const colours = new THREE.BufferAttribute(new Float32Array(particles * 3), 3);
    colours.setUsage(THREE.DynamicDrawUsage);
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', positions);
    geometry.setAttribute('color', colours);
    const surfaceMaterial = new THREE.MeshStandardMaterial({ vertexColors: true, side: THREE.DoubleSide, roughness: 0.8, metalness: 0 });
    let surface = null, segments = null, points = null;
    if (triangles.length > 0) {
      geometry.setIndex(new THREE.BufferAttribute(triangles, 1));
      surface = new THREE.Mesh(geometry, surfaceMaterial);
      surface.castShadow = true;
      surface.receiveShadow = true;
      surface.frustumCulled = false;  // its bounding sphere is that of the first frame
      scene.add(surface);
    }
    if (lines.length > 0) {
      const lineGeometry = new THREE.BufferGeometry();
      lineGeometry.setAttribute('position', positions);
      lineGeometry.setAttribute('color', colours);
      lineGeometry.setIndex(new THREE.BufferAttribute(lines, 1));
      segments = new THREE.LineSegments(lineGeometry, new THREE.LineBasicMaterial({ vertexColors: true }));
      segments.frustumCulled = false;
      scene.add(segments);
    }
    if (triangles.length === 0) {
      const pointGeometry = new THREE.BufferGeometry();
      pointGeometry.setAttribute('position', positions);
      pointGeometry.setAttribute('color', colours);
      points = new THREE.Points(pointGeometry, new THREE.PointsMaterial({ vertexColors: true, size: Math.max(0.01, R / 60) }));
      points.frustumCulled = false;
      scene.add(points);
    }

    // Reference grid cells: a 1-2-5 length giving about 12 cells across the bounds' footprint.
    const footprint = Math.max(bounds.size[0], bounds.size[2], 0.5 * bounds.size[1], 0.05);
    const cell = niceStep(2.2 * footprint, 16);
    const gridHalf = Math.ceil(1.6 * footprint / cell) * cell;
    const helpers = new THREE.Group();
    scene.add(helpers);
    api.helpers = { grid: false, axes: false, planeGrids: 0, cell };

    // Colliders: one case per shape; unknown shapes are skipped and listed.
    const colliderMaterial = new THREE.MeshStandardMaterial({ color: 0x7d8996, roughness: 0.85, metalness: 0, side: THREE.DoubleSide });
    const groundMaterial = new THREE.MeshStandardMaterial({ color: 0x9aa4b0, roughness: 1, metalness: 0, transparent: true,
      alphaMap: radialAlphaTexture(THREE), depthWrite: true, side: THREE.DoubleSide });
    const colliders = [];
    for (const c of data.colliders) {
      let object = null;
      if (c.shape === 'plane') {
        // An infinite plane, drawn as a square around the objects' footprint on it (in its own frame).
        const pose = c.poses[0];
        const local = centre.clone().sub(new THREE.Vector3(pose[0], pose[1], pose[2]))
          .applyQuaternion(new THREE.Quaternion(pose[3], pose[4], pose[5], pose[6]).invert());
        const u = Math.round(local.x / cell) * cell, v = Math.round(local.z / cell) * cell;
        const plane = new THREE.PlaneGeometry(2 * gridHalf, 2 * gridHalf);
        plane.rotateX(-Math.PI / 2);  // its normal becomes the collider frame's +y
        object = new THREE.Group();
        const mesh = new THREE.Mesh(plane, groundMaterial);
        mesh.position.set(u, 0, v);
        mesh.receiveShadow = true;
        object.add(mesh);
        const grid = fadingGrid(THREE, gridHalf, cell, 0x5d6670, 0.55);
        grid.position.set(u, 1e-4 * R, v);
        helpers.add(grid);
        grid.userData.follows = object;
        api.helpers.planeGrids += 1;
      } else if (c.shape === 'sphere') {
        object = new THREE.Mesh(new THREE.SphereGeometry(c.radius, 64, 32), colliderMaterial);
      } else if (c.shape === 'box') {
        const h = c.half_extents;
        object = new THREE.Mesh(new THREE.BoxGeometry(2 * h[0], 2 * h[1], 2 * h[2]), colliderMaterial);
      } else if (c.shape === 'capsule') {
        object = new THREE.Mesh(new THREE.CapsuleGeometry(c.radius, 2 * c.half_height, 12, 32), colliderMaterial);
      } else if (c.shape === 'mesh' && c.vertices && c.triangles) {
        const meshGeometry = new THREE.BufferGeometry();
        meshGeometry.setAttribute('position', new THREE.BufferAttribute(floatsOf(c.vertices), 3));
        meshGeometry.setIndex(new THREE.BufferAttribute(indicesOf(c.triangles), 1));
        meshGeometry.computeVertexNormals();
        object = new THREE.Mesh(meshGeometry, colliderMaterial);
      }
      if (!object) { api.skippedColliders.push(c.shape); continue; }
      object.traverse((o) => { if (o.isMesh) { o.receiveShadow = true; if (c.shape !== 'plane') o.castShadow = true; } });
      scene.add(object);
      colliders.push({ object, poses: c.poses });
    }
    // Rigid bodies: their triangles posed per frame like kinematic colliders; joints: a small sphere
    // at each anchor point.
    const bodyMaterial = new THREE.MeshStandardMaterial({ color: 0xc08a4a, roughness: 0.7, metalness: 0, side: THREE.DoubleSide });
    for (const b of data.bodies || []) {
      const bodyGeometry = new THREE.BufferGeometry();
      bodyGeometry.setAttribute('position', new THREE.BufferAttribute(floatsOf(b.vertices), 3));
      bodyGeometry.setIndex(new THREE.BufferAttribute(indicesOf(b.triangles), 1));
      bodyGeometry.computeVertexNormals();
      const object = new THREE.Mesh(bodyGeometry, bodyMaterial);
      object.castShadow = object.receiveShadow = true;
      scene.add(object);
      colliders.push({ object, poses: b.poses });
    }
    const jointMaterial = new THREE.MeshStandardMaterial({ color: 0xe0e4e8, roughness: 0.4, metalness: 0 });
    for (const j of data.joints || []) {
      for (const side of [0, 1]) {
        const object = new THREE.Mesh(new THREE.SphereGeometry(0.006 * R, 16, 8), jointMaterial);
        scene.add(object);
        colliders.push({ object, poses: j.anchors.map((a) => [a[3 * side], a[3 * side + 1], a[3 * side + 2], 0, 0, 0, 1]) });
      }
    }
    if (api.skippedColliders.length > 0) notice('Not drawn (shape unknown to this viewer): ' + api.skippedColliders.join(', ') + '.');

    // Without colliders, a reference floor: a grid under the objects (at y = 0 when they stay a little
    // above it) and the world axes (at the origin when it is on the grid, else at a corner of it).
    if (data.colliders.length === 0) {
      const lowY = bounds.low[1];
      const groundY = lowY < 0 || lowY > 0.5 * footprint ? lowY : 0;
      const u = Math.round(bounds.centre[0] / cell) * cell, v = Math.round(bounds.centre[2] / cell) * cell;
      const grid = fadingGrid(THREE, gridHalf, cell, 0xaab4c0, 0.5);
      grid.position.set(u, groundY, v);
      helpers.add(grid);
      const onGrid = Math.abs(groundY) <= 0.05 * footprint && Math.abs(u) <= gridHalf * 0.7 && Math.abs(v) <= gridHalf * 0.7;
      const origin = onGrid ? new THREE.Vector3(0, groundY, 0) : new THREE.Vector3(u - gridHalf * 0.6, groundY, v - gridHalf * 0.6);
      helpers.add(axesArrows(THREE, origin, cell));
      api.helpers.grid = true;
      api.helpers.axes = true;
      api.helpers.axesAt = origin.toArray();
    }
    $('helpers').parentElement.hidden = helpers.children.length === 0;
    $('scale').textContent = 'grid cell ' + formatNumber(cell) + ' m';
    $('scale').hidden = helpers.children.length === 0;

    // The picked particle: a ring of constant screen size, drawn over everything.
    const ring = document.createElement('canvas');
    ring.width = ring.height = 64;
    const rg = ring.getContext('2d');
    rg.strokeStyle = '#fff'; rg.lineWidth = 7; rg.beginPath(); rg.arc(32, 32, 24, 0, 2 * Math.PI); rg.stroke();
    rg.fillStyle = '#fff'; rg.beginPath(); rg.arc(32, 32, 5, 0, 2 * Math.PI); rg.fill();
    const ringTexture = new THREE.CanvasTexture(ring);
    ringTexture.colorSpace = THREE.SRGBColorSpace;
    const marker = new THREE.Sprite(new THREE.SpriteMaterial({ map: ringTexture, color: 0x3ee0ff, depthTest: false, depthWrite: false,
      sizeAttenuation: false, transparent: true }));
    marker.scale.set(0.035, 0.035, 1);
    marker.renderOrder = 10;
    marker.visible = false;
    scene.add(marker);
    let picked = -1;

    // Orbit camera: azimuth/elevation/distance about a target; the home distance fits the run's
    // bounding box in the view with a margin.
    // The default view: the target is moved to the middle of the positions' extent across the view,
    // then the distance is the least that shows every position seen over the run with a margin.
    function fitView(aspect) {
      const direction = new THREE.Vector3(Math.sin(azimuth) * Math.cos(elevation), Math.sin(elevation), Math.cos(azimuth) * Math.cos(elevation));
      const rightAxis = new THREE.Vector3(0, 1, 0).cross(direction).normalize();
      const upAxis = direction.clone().cross(rightAxis);
      const tanV = Math.tan(THREE.MathUtils.degToRad(camera.fov / 2)) * 0.85, tanH = tanV * aspect;
      const p = new THREE.Vector3();
      const extent = [Infinity, -Infinity, Infinity, -Infinity];
      for (let i = 0; i < bounds.points.length; i += 3) {
        p.set(bounds.points[i], bounds.points[i + 1], bounds.points[i + 2]).sub(centre);
        const u = p.dot(rightAxis), v = p.dot(upAxis);
        extent[0] = Math.min(extent[0], u); extent[1] = Math.max(extent[1], u);
        extent[2] = Math.min(extent[2], v); extent[3] = Math.max(extent[3], v);
      }
      const target = centre.clone();
      if (Number.isFinite(extent[0])) {
        target.addScaledVector(rightAxis, (extent[0] + extent[1]) / 2).addScaledVector(upAxis, (extent[2] + extent[3]) / 2);
      }
      let distance = 0;
      for (let i = 0; i < bounds.points.length; i += 3) {
        p.set(bounds.points[i], bounds.points[i + 1], bounds.points[i + 2]).sub(target);
        const toward = p.dot(direction);
        distance = Math.max(distance, toward + Math.abs(p.dot(rightAxis)) / tanH, toward + Math.abs(p.dot(upAxis)) / tanV);
      }
      return { target, distance: Math.max(distance, 0.1 * R) };
    }
    const fitted = fitView(canvas.clientWidth > 0 ? canvas.clientWidth / canvas.clientHeight : 4 / 3);
    const home = { target: fitted.target, azimuth, elevation, distance: fitted.distance };
    const orbit = { target: home.target.clone(), azimuth: home.azimuth, elevation: home.elevation, distance: home.distance };
    function placeCamera() {
      const c = Math.cos(orbit.elevation);
      camera.position.set(orbit.target.x + orbit.distance * c * Math.sin(orbit.azimuth),
        orbit.target.y + orbit.distance * Math.sin(orbit.elevation),
        orbit.target.z + orbit.distance * c * Math.cos(orbit.azimuth));
      camera.near = orbit.distance / 200; camera.far = orbit.distance * 200;
      camera.updateProjectionMatrix();
      camera.lookAt(orbit.target);
      camera.updateMatrixWorld();
      api.camera = { azimuth: orbit.azimuth, elevation: orbit.elevation, distance: orbit.distance, target: orbit.target.toArray() };
      dirty = true;
    }

    // Picking: the surface under the pointer (its vertex nearest the hit), else the particle drawn
    // nearest the pointer within 12 pixels (lines, points).
    const raycaster = new THREE.Raycaster();
    function particleAt(clientX, clientY) {
      const rect = canvas.getBoundingClientRect();
      const ndc = new THREE.Vector2((clientX - rect.left) / rect.width * 2 - 1, -(clientY - rect.top) / rect.height * 2 + 1);
      const p = positions.array;
      if (surface) {
        geometry.computeBoundingSphere();  // the positions change every frame
        raycaster.setFromCamera(ndc, camera);
        const hit = raycaster.intersectObject(surface, false)[0];
        if (hit && hit.face) {
          let best = -1, bestDistance = Infinity;
          for (const i of [hit.face.a, hit.face.b, hit.face.c]) {
            const d = hit.point.distanceToSquared(new THREE.Vector3(p[3 * i], p[3 * i + 1], p[3 * i + 2]));
            if (d < bestDistance) { bestDistance = d; best = i; }
          }
          return best;
        }
      }
      let best = -1, bestDistance = 12 * 12;
      const v = new THREE.Vector3();
      for (let i = 0; i !== particles; ++i) {
        v.set(p[3 * i], p[3 * i + 1], p[3 * i + 2]).project(camera);
        if (v.z < -1 || v.z > 1) continue;
        const dx = (v.x - ndc.x) * rect.width / 2, dy = (v.y - ndc.y) * rect.height / 2;
        const d = dx * dx + dy * dy;
        if (d < bestDistance) { bestDistance = d; best = i; }
      }
      return best;
    }
    function placeMarker() {
      marker.visible = picked >= 0;
      if (picked >= 0) marker.position.set(positions.array[3 * picked], positions.array[3 * picked + 1], positions.array[3 * picked + 2]);
      dirty = true;
    }

    let drag = null;
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, x0: e.clientX, y0: e.clientY, pan: e.button === 2 || e.shiftKey, button: e.button };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener('pointerup', (e) => {
      // A click (a left press that did not move) picks a particle; a click on nothing clears the pick.
      if (drag && drag.button === 0 && !drag.pan && Math.hypot(e.clientX - drag.x0, e.clientY - drag.y0) < 4) {
        const index = particleAt(e.clientX, e.clientY);
        setPicked(index);
      }
      drag = null;
    });
    canvas.addEventListener('pointermove', (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX; drag.y = e.clientY;
      if (drag.pan) {
        const scale = orbit.distance / canvas.clientHeight;
        const rightAxis = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 0);
        const upAxis = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 1);
        orbit.target.addScaledVector(rightAxis, -dx * scale).addScaledVector(upAxis, dy * scale);
      } else {
        orbit.azimuth -= dx * 0.008;
        orbit.elevation = Math.max(-1.55, Math.min(1.55, orbit.elevation + dy * 0.008));
      }
      placeCamera();
    });
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      orbit.distance *= Math.exp(Math.sign(e.deltaY) * 0.1);
      placeCamera();
    }, { passive: false });
    canvas.addEventListener('dblclick', () => {
      orbit.target.copy(home.target); orbit.azimuth = home.azimuth; orbit.elevation = home.elevation; orbit.distance = home.distance;
      placeCamera();
    });

    const values = new Float32Array(particles);
    let dirty = true;
    let shownIndex = 0;
    function applyFrame(index) {
      shownIndex = index;
      const p = positionsOf(index);
      positions.array.set(p);
      positions.needsUpdate = true;
      const mode = $('colour').value;
      const c = colours.array;
      if (mode === 'plain') {
        for (let i = 0; i !== particles; ++i) setColour(bodyColour, c, 3 * i);
        $('legend').hidden = true;
      } else {
        const scale = scaleOf(mode);
        (mode === 'stretch' ? stretchOf : speedOf)(index, values);
        for (let i = 0; i !== particles; ++i) {
          if (mode === 'stretch') ramp(values[i] / scale, c, 3 * i); else sequential(values[i] / scale, c, 3 * i);
        }
        $('legend').hidden = false;
        $('legend-low').textContent = mode === 'stretch' ? (-scale * 100).toPrecision(2) + ' %' : '0 m/s';
        $('legend-high').textContent = mode === 'stretch' ? '+' + (scale * 100).toPrecision(2) + ' %' : scale.toPrecision(3) + ' m/s';
        document.querySelector('#legend .ramp').style.background = mode === 'stretch' ?
          'linear-gradient(90deg, rgb(38,89,230), rgb(217,217,209), rgb(230,51,31))' :
          'linear-gradient(90deg, rgb(31,51,140), rgb(26,153,166), rgb(242,217,64), rgb(230,64,26))';
      }
      colours.needsUpdate = true;
      if (surface) geometry.computeVertexNormals();
      for (const { object, poses } of colliders) {
        const pose = poses[Math.min(index, poses.length - 1)];
        object.position.set(pose[0], pose[1], pose[2]);
        object.quaternion.set(pose[3], pose[4], pose[5], pose[6]);
      }
      for (const grid of helpers.children) {
        const follows = grid.userData.follows;
        if (follows) { grid.quaternion.copy(follows.quaternion); grid.position.copy(grid.userData.local || (grid.userData.local = grid.position.clone())).applyQuaternion(follows.quaternion).add(follows.position); }
      }
      placeMarker();
    }
    function setPicked(index) {
      picked = index;
      placeMarker();
      showPickedParticle(index);
      drawPlots(frameCount > 0 ? times[shownIndex] : undefined);
    }
    function resize() {
      const width = canvas.clientWidth, height = canvas.clientHeight;
      if (width === 0 || height === 0) return;
      renderer.setSize(width, height, false);
      camera.aspect = width / height;
      camera.updateProjectionMatrix();
      dirty = true;
    }
    $('unpick').addEventListener('click', () => setPicked(-1));
    new ResizeObserver(resize).observe(canvas);
    resize();
    placeCamera();
    return {
      show(index) { applyFrame(index); },
      wireframe(on) { surfaceMaterial.wireframe = on; dirty = true; },
      helpers(on) { helpers.visible = on; $('scale').hidden = !on; dirty = true; },
      pick(index) { setPicked(index); },
      // Client coordinates where particle `i` of the shown frame is drawn.
      screenOf(i) {
        const rect = canvas.getBoundingClientRect();
        const v = new THREE.Vector3(positions.array[3 * i], positions.array[3 * i + 1], positions.array[3 * i + 2]).project(camera);
        return { x: rect.left + (v.x + 1) / 2 * rect.width, y: rect.top + (1 - v.y) / 2 * rect.height };
      },
      // The shown view as a PNG data URL: drawn again first, as the drawing buffer is not kept.
      png() {
        renderer.render(scene, camera);
        return canvas.toDataURL('image/png');
      },
      render() {
        if (!dirty) return;
        renderer.render(scene, camera);
        dirty = false;
        api.renders = (api.renders || 0) + 1;
      },
    };
  }

  // ---------------------------------------------------------------- playback
  let view = null;
  let current = 0;
  let playing = frameCount > 1;
  let speed = 1;
  let playTime = frameCount > 0 ? times[0] : 0;
  const slider = $('frame');
  slider.max = String(Math.max(0, frameCount - 1));

  function indexAt(t) {
    let lo = 0, hi = frameCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (times[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
  }
  function show(index) {
    if (frameCount === 0) return;
    current = Math.max(0, Math.min(frameCount - 1, index));
    slider.value = String(current);
    $('frame-label').textContent = 'frame ' + frames.numbers[current] + ' / ' + frames.last + '  t = ' + times[current].toFixed(3) + ' s';
    $('frame-flag').hidden = !unconvergedAt(frames.numbers[current]);
    if (view) view.show(current);
    drawPlots(times[current]);
    api.frame = current;
  }
  function setPlaying(on) {
    playing = on && frameCount > 1;
    $('play').textContent = playing ? 'Pause' : 'Play';
    if (playing) playTime = times[current];
  }
  function exportPng() {
    if (!view) return;
    const url = view.png();
    const name = (data.scene + '-frame-' + (frameCount > 0 ? frames.numbers[current] : 0)).replace(/[^A-Za-z0-9._-]/g, '_') + '.png';
    const link = document.createElement('a');
    link.href = url;
    link.download = name;
    document.body.appendChild(link);
    link.click();
    link.remove();
    api.exports += 1;
    api.lastExport = { name, bytes: url.length, prefix: url.slice(0, 22) };
  }
  $('play').addEventListener('click', () => setPlaying(!playing));
  document.addEventListener('keydown', (e) => {
    if (e.code === 'Space' && e.target === document.body) { e.preventDefault(); setPlaying(!playing); }
  });
  slider.addEventListener('input', () => { setPlaying(false); show(Number(slider.value)); });
  $('speed').addEventListener('change', () => { speed = Number($('speed').value); });
  $('wireframe').addEventListener('change', () => { if (view) view.wireframe($('wireframe').checked); });
  $('helpers').addEventListener('change', () => { if (view) view.helpers($('helpers').checked); });
  $('colour').addEventListener('change', () => show(current));
  $('export').addEventListener('click', exportPng);
  window.addEventListener('resize', () => drawPlots(frameCount > 0 ? times[current] : undefined));
  api.screenOf = (i) => (view ? view.screenOf(i) : null);

  let last = performance.now();
  function tick(now) {
    const elapsed = Math.min(0.25, (now - last) / 1000);
    last = now;
    if (playing) {
      playTime += elapsed * speed;
      if (playTime > times[frameCount - 1]) playTime = times[0];
      const index = indexAt(playTime);
      if (index !== current) show(index);
    }
    if (view) view.render();
    requestAnimationFrame(tick);
  }

  async function main() {
    showConvergence();
    api.convergence = convergence ? { converged: convergence.converged, stretches: convergence.stretches.length, advice: convergence.advice } : null;
    buildSummary();
    buildConvergencePlot();
    buildProbePlots();
    if (frameCount === 0) showMessage('This run recorded no frames.');
    else if (!webglAvailable()) {
      showMessage('This viewer draws the animation with WebGL, which this browser does not provide or has turned off. ' +
        'The probe plots still work; `pliant render` writes PNG images of frames without a browser.');
    } else {
      try {
        view = await start3d();
        api.webgl = true;
      } catch (e) {
        showMessage('The 3D view could not start: ' + e.message);
        throw e;
      }
    }
    $('export').disabled = !view;
    setPlaying(playing);
    show(0);
    $('play').textContent = playing ? 'Pause' : 'Play';
    api.ready = true;
    requestAnimationFrame(tick);
  }
  main().catch((e) => { api.error = String(e && e.stack || e); console.error(e); api.ready = true; });
})();
