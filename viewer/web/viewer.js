// Pliant's viewer page. The page carries everything it needs: the viewer data (JSON, positions as
// float32 little-endian in base64, one string per recorded frame), the probe CSV and three.js
// (base64, turned into blob: module URLs here, so nothing is fetched). window.pliantViewer exposes
// the state that the browser test reads.
// This text is inlined in a script element: it must never contain a "less-than slash" pair.
'use strict';

(function () {
  const api = { ready: false, webgl: false, frameCount: 0, frame: 0, plots: [], skippedColliders: [], error: null };
  window.pliantViewer = api;

  const $ = (id) => document.getElementById(id);
  const data = JSON.parse($('pliant-data').textContent);
  const probesCsv = JSON.parse($('pliant-probes').textContent);
  const frames = data.frames;
  const frameCount = frames.positions.length;
  const times = frames.times_s;
  api.frameCount = frameCount;

  $('title').textContent = 'Pliant: ' + data.scene;
  $('description').textContent = data.description || '';

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
  function edgeLength(p, a, b) {
    const dx = p[3 * a] - p[3 * b], dy = p[3 * a + 1] - p[3 * b + 1], dz = p[3 * a + 2] - p[3 * b + 2];
    return Math.sqrt(dx * dx + dy * dy + dz * dz);
  }
  const restLength = new Float32Array(edges.length / 2);
  if (frameCount > 0) {
    const p0 = positionsOf(0);
    for (let e = 0; e !== restLength.length; ++e) restLength[e] = edgeLength(p0, edges[2 * e], edges[2 * e + 1]);
  }
  // Stretch of a vertex: mean relative elongation of its edges (length / rest length - 1).
  function stretchOf(index, out) {
    const p = positionsOf(index);
    const count = new Uint16Array(particles);
    out.fill(0);
    for (let e = 0; e !== restLength.length; ++e) {
      if (restLength[e] === 0) continue;
      const a = edges[2 * e], b = edges[2 * e + 1];
      const s = edgeLength(p, a, b) / restLength[e] - 1;
      out[a] += s; out[b] += s; ++count[a]; ++count[b];
    }
    for (let i = 0; i !== particles; ++i) if (count[i] > 0) out[i] /= count[i];
    return out;
  }
  // Speed of a vertex: distance moved since the previous recorded frame over the time between them.
  function speedOf(index, out) {
    out.fill(0);
    if (frameCount > 1) {
      const i1 = index > 0 ? index : 1, i0 = i1 - 1;
      const p1 = positionsOf(i1), p0 = positionsOf(i0);
      const dt = times[i1] - times[i0];
      if (dt > 0) for (let i = 0; i !== particles; ++i) out[i] = edgeLength2(p1, p0, i) / dt;
    }
    return out;
  }
  function edgeLength2(p, q, i) {
    const dx = p[3 * i] - q[3 * i], dy = p[3 * i + 1] - q[3 * i + 1], dz = p[3 * i + 2] - q[3 * i + 2];
    return Math.sqrt(dx * dx + dy * dy + dz * dz);
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
  // Blue (compressed or still) - light grey - red (stretched or fast).
  function ramp(t, out, offset) {
    t = Math.max(-1, Math.min(1, t));
    const mid = [0.85, 0.85, 0.82], low = [0.15, 0.35, 0.9], high = [0.9, 0.2, 0.12];
    const end = t < 0 ? low : high;
    const u = Math.abs(t);
    for (let k = 0; k !== 3; ++k) out[offset + k] = mid[k] + (end[k] - mid[k]) * u;
  }
  function sequential(t, out, offset) {
    t = Math.max(0, Math.min(1, t));
    const stops = [[0.12, 0.2, 0.55], [0.1, 0.6, 0.65], [0.95, 0.85, 0.25], [0.9, 0.25, 0.1]];
    const x = t * (stops.length - 1), i = Math.min(stops.length - 2, Math.floor(x)), f = x - i;
    for (let k = 0; k !== 3; ++k) out[offset + k] = stops[i][k] + (stops[i + 1][k] - stops[i][k]) * f;
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
  const palette = ['#f0a53a', '#4fb3e8', '#7bd17b', '#e86a6a', '#c792ea', '#e8d36a'];
  const plots = [];
  function buildPlots() {
    const table = parseCsv(probesCsv || '');
    const container = $('plots');
    if (!table || table.header[0] !== 'time') {
      const p = document.createElement('p');
      p.className = 'hint';
      p.textContent = 'This scene records no probes (add "probes" to the scene file to plot energy, residual or forces).';
      container.appendChild(p);
      return;
    }
    const time = table.columns[0];
    const groups = new Map();
    for (let c = 1; c !== table.header.length; ++c) {
      const name = table.header[c];
      const dot = name.lastIndexOf('.');
      const probe = dot > 0 ? name.slice(0, dot) : name, column = dot > 0 ? name.slice(dot + 1) : name;
      if (!groups.has(probe)) groups.set(probe, []);
      groups.get(probe).push({ column, values: table.columns[c] });
    }
    // What a probe is follows from its columns (src/probes.cpp); energy, residual and forces first.
    const kindOf = (series) => {
      const names = series.map((s) => s.column).join(' ');
      if (names.includes('kinetic')) return ['energy', 'J', 0];
      if (names === 'max rms') return ['residual', '|C + α̃λ|', 1];
      if (names === 'force') return ['force', 'N', 2];
      if (names.includes('px')) return ['momentum', 'kg m/s', 4];
      if (names.includes('vx')) return ['particle', 'm', 3];
      return ['centre of mass', 'm', 5];
    };
    const ordered = [...groups.entries()].map(([name, series]) => ({ name, series, kind: kindOf(series) }));
    ordered.sort((a, b) => a.kind[2] - b.kind[2]);
    for (const { name, series, kind } of ordered) {
      // Particle probes: positions only (velocities would share an axis with them).
      const shown = kind[0] === 'particle' ? series.filter((s) => s.column.length === 1) :
        kind[0] === 'momentum' ? series.filter((s) => s.column[0] === 'p') : series;
      const logScale = kind[0] === 'residual' && shown.every((s) => s.values.every((v) => v > 0));
      const box = document.createElement('div');
      box.className = 'plot';
      const title = document.createElement('h3');
      title.textContent = name + ' (' + kind[0] + ', ' + kind[1] + (logScale ? ', log scale' : '') + ')';
      const canvas = document.createElement('canvas');
      const keys = document.createElement('div');
      keys.className = 'keys';
      shown.forEach((s, k) => {
        const key = document.createElement('span');
        const swatch = document.createElement('i');
        swatch.style.background = palette[k % palette.length];
        key.appendChild(swatch);
        key.appendChild(document.createTextNode(s.column));
        keys.appendChild(key);
      });
      box.appendChild(title); box.appendChild(canvas); box.appendChild(keys);
      container.appendChild(box);
      const plot = { name, kind: kind[0], canvas, time, series: shown, logScale, points: time.length, drawn: 0 };
      plots.push(plot);
      api.plots.push({ name, kind: kind[0], series: shown.length, points: time.length });
    }
  }
  function drawPlot(plot, cursorTime) {
    const canvas = plot.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(100, canvas.clientWidth), height = Math.max(60, canvas.clientHeight);
    if (canvas.width !== Math.round(width * ratio)) { canvas.width = Math.round(width * ratio); canvas.height = Math.round(height * ratio); }
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, width, height);
    const map = (v) => (plot.logScale ? Math.log10(v) : v);
    let low = Infinity, high = -Infinity;
    for (const s of plot.series) for (const v of s.values) if (Number.isFinite(map(v))) { low = Math.min(low, map(v)); high = Math.max(high, map(v)); }
    if (!Number.isFinite(low)) { low = 0; high = 1; }
    if (high - low < 1e-12 * Math.max(1, Math.abs(high))) { high += 0.5; low -= 0.5; }
    const t0 = plot.time[0], t1 = plot.time[plot.time.length - 1] > t0 ? plot.time[plot.time.length - 1] : t0 + 1;
    const left = 58, right = 8, top = 6, bottom = 18;
    const x = (t) => left + (t - t0) / (t1 - t0) * (width - left - right);
    const y = (v) => top + (1 - (map(v) - low) / (high - low)) * (height - top - bottom);
    g.strokeStyle = '#444c56'; g.lineWidth = 1;
    g.strokeRect(left, top, width - left - right, height - top - bottom);
    g.fillStyle = '#9aa3ad'; g.font = '11px system-ui, sans-serif';
    const label = (v) => (plot.logScale ? '1e' + v.toFixed(1) : Math.abs(v) >= 1e4 || (Math.abs(v) < 1e-2 && v !== 0) ? v.toExponential(2) : v.toPrecision(3));
    g.textAlign = 'right';
    g.fillText(label(high), left - 4, top + 9);
    g.fillText(label(low), left - 4, height - bottom);
    g.textAlign = 'left'; g.fillText(t0.toFixed(2) + ' s', left, height - 4);
    g.textAlign = 'right'; g.fillText(t1.toFixed(2) + ' s', width - right, height - 4);
    const n = plot.time.length;
    const step = Math.max(1, Math.floor(n / (2 * width)));
    plot.series.forEach((s, k) => {
      g.strokeStyle = palette[k % palette.length]; g.lineWidth = 1.5;
      g.beginPath();
      let started = false;
      for (let i = 0; i < n; i += step) {
        const v = s.values[i];
        if (!Number.isFinite(map(v))) { started = false; continue; }
        if (started) g.lineTo(x(plot.time[i]), y(v)); else { g.moveTo(x(plot.time[i]), y(v)); started = true; }
      }
      g.stroke();
    });
    if (cursorTime !== undefined) {
      g.strokeStyle = '#e3e6ea'; g.lineWidth = 1; g.setLineDash([3, 3]);
      g.beginPath(); g.moveTo(x(cursorTime), top); g.lineTo(x(cursorTime), height - bottom); g.stroke();
      g.setLineDash([]);
    }
    plot.drawn += 1;
  }
  function drawPlots(cursorTime) {
    for (const plot of plots) drawPlot(plot, cursorTime);
    api.plotsDrawnAt = cursorTime;
  }

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

  function boundsOf(indices) {
    const low = [Infinity, Infinity, Infinity], high = [-Infinity, -Infinity, -Infinity];
    for (const index of indices) {
      const p = positionsOf(index);
      for (let i = 0; i !== p.length; i += 3)
        for (let k = 0; k !== 3; ++k) { low[k] = Math.min(low[k], p[i + k]); high[k] = Math.max(high[k], p[i + k]); }
    }
    if (!Number.isFinite(low[0])) return { centre: [0, 0, 0], radius: 1 };
    const centre = [0, 1, 2].map((k) => (low[k] + high[k]) / 2);
    const radius = Math.max(0.05, Math.hypot(high[0] - low[0], high[1] - low[1], high[2] - low[2]) / 2);
    return { centre, radius };
  }

  async function start3d() {
    const THREE = await loadThree();
    const canvas = $('scene');
    const renderer = new THREE.WebGLRenderer({ canvas, antialias: true });
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    const scene = new THREE.Scene();
    scene.background = new THREE.Color(0x15181c);
    scene.add(new THREE.HemisphereLight(0xdfe8ff, 0x30281f, 1.6));
    const sun = new THREE.DirectionalLight(0xffffff, 1.8);
    sun.position.set(2, 5, 3);
    scene.add(sun);
    const camera = new THREE.PerspectiveCamera(40, 4 / 3, 0.01, 1000);

    const bounds = boundsOf(frameCount > 1 ? [0, frameCount - 1] : frameCount === 1 ? [0] : []);
    const positions = new THREE.BufferAttribute(new Float32Array(particles * 3), 3);
    positions.setUsage(THREE.DynamicDrawUsage);
    const colours = new THREE.BufferAttribute(new Float32Array(particles * 3), 3);
    colours.setUsage(THREE.DynamicDrawUsage);
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', positions);
    geometry.setAttribute('color', colours);
    const surfaceMaterial = new THREE.MeshStandardMaterial({ vertexColors: true, side: THREE.DoubleSide, roughness: 0.75, metalness: 0 });
    let surface = null, segments = null, points = null;
    if (triangles.length > 0) {
      geometry.setIndex(new THREE.BufferAttribute(triangles, 1));
      surface = new THREE.Mesh(geometry, surfaceMaterial);
      scene.add(surface);
    }
    if (lines.length > 0) {
      const lineGeometry = new THREE.BufferGeometry();
      lineGeometry.setAttribute('position', positions);
      lineGeometry.setAttribute('color', colours);
      lineGeometry.setIndex(new THREE.BufferAttribute(lines, 1));
      segments = new THREE.LineSegments(lineGeometry, new THREE.LineBasicMaterial({ vertexColors: true }));
      scene.add(segments);
    }
    if (triangles.length === 0) {
      const pointGeometry = new THREE.BufferGeometry();
      pointGeometry.setAttribute('position', positions);
      pointGeometry.setAttribute('color', colours);
      points = new THREE.Points(pointGeometry, new THREE.PointsMaterial({ vertexColors: true, size: Math.max(0.01, bounds.radius / 60) }));
      scene.add(points);
    }

    // Colliders: one case per shape; unknown shapes are skipped and listed.
    const colliderMaterial = new THREE.MeshStandardMaterial({ color: 0x6b7785, roughness: 0.9, metalness: 0, side: THREE.DoubleSide });
    const groundMaterial = new THREE.MeshStandardMaterial({ color: 0x3a424c, roughness: 1, metalness: 0, side: THREE.DoubleSide });
    const colliders = [];
    for (const c of data.colliders) {
      let object = null;
      if (c.shape === 'plane') {
        const size = Math.max(4 * bounds.radius, 1);
        const plane = new THREE.PlaneGeometry(size, size, 16, 16);
        plane.rotateX(-Math.PI / 2);  // its normal becomes the collider frame's +y
        object = new THREE.Group();
        object.add(new THREE.Mesh(plane, groundMaterial));
        const grid = new THREE.GridHelper(size, 16, 0x59636e, 0x4a535d);
        grid.position.y = 0.001 * size;
        object.add(grid);
      } else if (c.shape === 'sphere') {
        object = new THREE.Mesh(new THREE.SphereGeometry(c.radius, 48, 24), colliderMaterial);
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
      scene.add(object);
      colliders.push({ object, poses: c.poses });
    }
    if (api.skippedColliders.length > 0) notice('Not drawn (shape unknown to this viewer): ' + api.skippedColliders.join(', ') + '.');

    // Orbit camera: azimuth/elevation/distance about a target.
    const home = { target: new THREE.Vector3(...bounds.centre), azimuth: 0.6, elevation: 0.45, distance: 2.8 * bounds.radius };
    const orbit = { target: home.target.clone(), azimuth: home.azimuth, elevation: home.elevation, distance: home.distance };
    function placeCamera() {
      const c = Math.cos(orbit.elevation);
      camera.position.set(orbit.target.x + orbit.distance * c * Math.sin(orbit.azimuth),
        orbit.target.y + orbit.distance * Math.sin(orbit.elevation),
        orbit.target.z + orbit.distance * c * Math.cos(orbit.azimuth));
      camera.near = orbit.distance / 200; camera.far = orbit.distance * 200;
      camera.updateProjectionMatrix();
      camera.lookAt(orbit.target);
      dirty = true;
    }
    let drag = null;
    canvas.addEventListener('contextmenu', (e) => e.preventDefault());
    canvas.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, pan: e.button === 2 || e.shiftKey };
      canvas.setPointerCapture(e.pointerId);
    });
    canvas.addEventListener('pointerup', () => { drag = null; });
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
    function applyFrame(index) {
      const p = positionsOf(index);
      positions.array.set(p);
      positions.needsUpdate = true;
      const mode = $('colour').value;
      const c = colours.array;
      if (mode === 'plain') {
        for (let i = 0; i !== particles; ++i) { c[3 * i] = 0.86; c[3 * i + 1] = 0.55; c[3 * i + 2] = 0.25; }
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
      dirty = true;
    }
    function resize() {
      const width = canvas.clientWidth, height = canvas.clientHeight;
      if (width === 0 || height === 0) return;
      renderer.setSize(width, height, false);
      camera.aspect = width / height;
      camera.updateProjectionMatrix();
      dirty = true;
    }
    new ResizeObserver(resize).observe(canvas);
    resize();
    placeCamera();
    return {
      show(index) { applyFrame(index); },
      wireframe(on) { surfaceMaterial.wireframe = on; dirty = true; },
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
    if (view) view.show(current);
    drawPlots(times[current]);
    api.frame = current;
  }
  function setPlaying(on) {
    playing = on && frameCount > 1;
    $('play').textContent = playing ? 'Pause' : 'Play';
    if (playing) playTime = times[current];
  }
  $('play').addEventListener('click', () => setPlaying(!playing));
  document.addEventListener('keydown', (e) => {
    if (e.code === 'Space' && e.target === document.body) { e.preventDefault(); setPlaying(!playing); }
  });
  slider.addEventListener('input', () => { setPlaying(false); show(Number(slider.value)); });
  $('speed').addEventListener('change', () => { speed = Number($('speed').value); });
  $('wireframe').addEventListener('change', () => { if (view) view.wireframe($('wireframe').checked); });
  $('colour').addEventListener('change', () => show(current));
  window.addEventListener('resize', () => drawPlots(frameCount > 0 ? times[current] : undefined));

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
    buildPlots();
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
    setPlaying(playing);
    show(0);
    $('play').textContent = playing ? 'Pause' : 'Play';
    api.ready = true;
    requestAnimationFrame(tick);
  }
  main().catch((e) => { api.error = String(e && e.stack || e); console.error(e); api.ready = true; });
})();
