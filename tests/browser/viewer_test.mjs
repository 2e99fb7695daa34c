// End-to-end test of the viewer page in a real browser: Debian's Chromium, headless, with software
// WebGL (SwiftShader), driven by playwright-core from npm. It runs `pliant run --html` on a small
// cloth without colliders that has one probe of every kind, opens the page from file:// and checks,
// from screenshots decoded here where it can (not from the page's own word):
//   - no console error, no page error, no request other than file:, blob: or data:;
//   - the 3D canvas shows the cloth, and moving the frame slider changes the picture;
//   - every probe kind gets its own title and unit, and every plot holds data and ink;
//   - log axes are labelled at readable values (1e-12, 0.001, 1, ...), never "1e-0.1";
//   - the summary panel shows the values of summary.json;
//   - the default camera puts every particle of the first and last frames inside the view, spread
//     over a good part of it;
//   - the energy plot labels its elastic term as ½αf² and says what the total is;
//   - a click on a particle picks it: a ring marks it and its position, velocity and speed are
//     plotted, with the values of the frames in viewer-data.json;
//   - "Save PNG" downloads a PNG of the view;
//   - a scene without colliders gets a ground grid and axes (the "grid" toggle changes the picture),
//     one with a ground plane gets a grid on it and no axes;
//   - with a convergence section in summary.json (`pliant view` of a folder written here), the
//     unconverged frames are shaded on the plots and the advice is shown; without summary.json the
//     page still works;
//   - without WebGL the page says so instead of staying blank.
// Usage: node viewer_test.mjs PLIANT_EXECUTABLE WORK_FOLDER
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const [pliant, work] = process.argv.slice(2);
if (!pliant || !work) {
  console.error('usage: node viewer_test.mjs PLIANT_EXECUTABLE WORK_FOLDER');
  process.exit(2);
}
const chromiumPath = '/usr/bin/chromium';
let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures += 1;
}

// ---------------------------------------------------------------- PNG decoding (8-bit RGB/RGBA)
function decodePng(buffer) {
  let offset = 8;
  let width = 0, height = 0, channels = 0;
  const data = [];
  while (offset < buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString('ascii', offset + 4, offset + 8);
    const body = buffer.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || body[12] !== 0) throw new Error('PNG: only 8-bit, non-interlaced images');
      channels = { 2: 3, 6: 4 }[body[9]];
      if (!channels) throw new Error(`PNG: colour type ${body[9]} not handled`);
    } else if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; ++y) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; ++x) {
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + x] = (line[x] + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}
const rgbAt = (image, i) => [0, 1, 2].map((k) => image.pixels[i * image.channels + k]);
const distance = (p, q) => Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2]);
// Fraction of pixels farther than `threshold` (sum of channel differences) from `colour`.
function fractionUnlike(image, colour, threshold = 30) {
  let count = 0;
  const n = image.width * image.height;
  for (let i = 0; i < n; ++i) if (distance(rgbAt(image, i), colour) > threshold) count += 1;
  return count / n;
}
// Fraction of pixels that differ, over the area both images cover (a screenshot of an element may
// round its size differently from the element's own pixels); 1 when the sizes differ by more than a pixel.
function fractionChanged(a, b, threshold = 30) {
  if (Math.abs(a.width - b.width) > 1 || Math.abs(a.height - b.height) > 1) return 1;
  const width = Math.min(a.width, b.width), height = Math.min(a.height, b.height);
  let count = 0;
  for (let y = 0; y < height; ++y)
    for (let x = 0; x < width; ++x) if (distance(rgbAt(a, y * a.width + x), rgbAt(b, y * b.width + x)) > threshold) count += 1;
  return count / (width * height);
}
// Fraction of pixels of the cloth's colour (orange: red well above blue; the background, grid and
// colliders are grey-blue).
function fractionOrange(image) {
  let count = 0;
  const n = image.width * image.height;
  for (let i = 0; i < n; ++i) {
    const [r, g, b] = rgbAt(image, i);
    if (r - b > 70 && r > g) count += 1;
  }
  return count / n;
}
// Pixels near `colour` inside the square of half-width `half` around (x, y).
function countNear(image, x, y, half, colour, threshold = 90) {
  let count = 0;
  for (let j = Math.max(0, Math.round(y) - half); j < Math.min(image.height, Math.round(y) + half); ++j)
    for (let i = Math.max(0, Math.round(x) - half); i < Math.min(image.width, Math.round(x) + half); ++i)
      if (distance(rgbAt(image, j * image.width + i), colour) < threshold) count += 1;
  return count;
}
// Mean of red minus blue over the columns [x0, x1) and rows [y0, y1).
function redness(image, x0, x1, y0, y1) {
  let sum = 0, count = 0;
  for (let y = y0; y < y1; ++y)
    for (let x = x0; x < x1; ++x) {
      const [r, , b] = rgbAt(image, y * image.width + x);
      sum += r - b; count += 1;
    }
  return count > 0 ? sum / count : 0;
}
// Positions of particle `index` in every recorded frame of a viewer data file (float32, base64).
function particleTrack(dataFile, index) {
  const data = JSON.parse(readFileSync(dataFile, 'utf8'));
  return data.frames.positions.map((text) => {
    const bytes = Buffer.from(text, 'base64');
    return [0, 1, 2].map((k) => bytes.readFloatLE(4 * (3 * index + k)));
  });
}

// ---------------------------------------------------------------- the runs
if (!existsSync(chromiumPath)) {
  console.error(`FAIL ${chromiumPath} is missing: run scripts/test.sh (it installs Debian's chromium) or apt-get install chromium`);
  process.exit(1);
}
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
// A 16 x 16 cloth pinned at two corners, no collider, one probe of every kind (include/pliant/io/scenes.h).
const nodes = 16;
const sceneFile = path.join(work, 'probe-cloth.json');
writeFileSync(sceneFile, JSON.stringify({
  name: 'probe-cloth',
  description: '16 x 16 cloth pinned at two corners, one probe of every kind',
  solver: { mode: 'small-steps', substeps: 10 },
  frames: 40,
  objects: [{
    type: 'cloth', name: 'cloth', grid: { nodes: [nodes, nodes], size: [1.0, 1.0], origin: [-0.5, 1.0, -0.5] },
    mass: 0.2, stretch: { compliance: 1e-7, damping: 1.0 }, pins: [{ index: 0 }, { index: nodes - 1 }],
  }],
  probes: [
    { name: 'corner', type: 'particle', object: 'cloth', index: nodes * nodes - 1 },
    { name: 'link', type: 'constraint_force', object: 'cloth', family: 'distance', index: 0 },
    { name: 'energy', type: 'energy' },
    { name: 'momentum', type: 'momentum' },
    { name: 'centre', type: 'centre_of_mass' },
    { name: 'residual', type: 'residual' },
    { name: 'intersections', type: 'intersections' },
  ],
}, null, 2));
const out = path.join(work, 'run');
const html = path.join(out, 'viewer.html');
const printed = execFileSync(pliant, ['run', sceneFile, '--out', out, '--html', html, '--quiet', '--no-frames'], { encoding: 'utf8' });
check(printed.includes(`viewer: ${html}`), 'pliant run --html prints the page path');
check(existsSync(html) && statSync(html).size > 100000, `the page exists (${existsSync(html) ? statSync(html).size : 0} bytes)`);
const summary = JSON.parse(readFileSync(path.join(out, 'summary.json'), 'utf8'));

// The same run's folder with a summary.json that reports unconverged frames, and one without summary.json.
const converge = path.join(work, 'converge');
const bare = path.join(work, 'bare');
const stretches = [[10, 14], [30, 30]];
const advice = 'Raise substeps from 10 to 20: the residual stays above the threshold while the cloth swings through.';
for (const folder of [converge, bare]) {
  mkdirSync(folder);
  for (const name of ['viewer-data.json', 'probes.csv']) copyFileSync(path.join(out, name), path.join(folder, name));
}
writeFileSync(path.join(converge, 'summary.json'), JSON.stringify({
  ...summary,
  convergence: { converged: false, threshold: 1e-3, worst_relative_residual: 0.042, unconverged_frames: stretches, advice },
}, null, 2));
execFileSync(pliant, ['view', converge], { encoding: 'utf8' });
execFileSync(pliant, ['view', bare], { encoding: 'utf8' });
// A scene with a ground plane (and a sphere).
const planeOut = path.join(work, 'plane');
execFileSync(pliant, ['run', 'cloth-sphere', '--frames', '4', '--out', planeOut, '--html', path.join(planeOut, 'viewer.html'), '--quiet', '--no-frames']);

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const problems = [];
  const open = async (file) => {
    const page = await context.newPage();
    page.on('console', (message) => { if (message.type() === 'error') problems.push(`${path.basename(path.dirname(file))}: console error: ${message.text()}`); });
    page.on('pageerror', (error) => problems.push(`${path.basename(path.dirname(file))}: page error: ${error.message}`));
    page.on('request', (request) => {
      if (!/^(file|blob|data):/.test(request.url())) problems.push(`request to ${request.url()}`);
    });
    await page.goto(pathToFileURL(file).href);
    await page.waitForFunction(() => window.pliantViewer && window.pliantViewer.ready, null, { timeout: 30000 });
    // Pause, as a user would before looking at a frame.
    if ((await page.textContent('#play')).trim() === 'Pause') await page.click('#play');
    return page;
  };
  const settle = (page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const setSlider = async (page, value) => {
    await page.$eval('#frame', (slider, v) => {
      slider.value = String(v);
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    }, value);
    await settle(page);
  };

  // ------------------------------------------------------------ the page of the run
  const page = await open(html);
  const state = await page.evaluate(() => ({ ...window.pliantViewer }));
  check(state.error === null, `the page started without error${state.error ? ': ' + state.error : ''}`);
  check(state.webgl === true, 'the 3D view runs on (software) WebGL');
  check(state.frameCount === 41, `the page holds 41 frames (${state.frameCount})`);

  const canvas = page.locator('#scene');
  await setSlider(page, 0);
  const first = decodePng(await canvas.screenshot());
  const orange = fractionOrange(first);
  check(orange > 0.03, `the cloth is in view: ${(100 * orange).toFixed(1)} % of the canvas is cloth-coloured`);
  await setSlider(page, state.frameCount - 1);
  check(await page.evaluate(() => window.pliantViewer.frame) === state.frameCount - 1, 'the slider selects the last frame');
  const lastFrame = decodePng(await canvas.screenshot());
  const changed = fractionChanged(first, lastFrame);
  check(changed > 0.01, `the frame slider changes the picture: ${(100 * changed).toFixed(1)} % of pixels changed`);

  // Framing: every particle of the first and last frames is drawn inside the canvas, and they spread
  // over a good part of it (not a small shape in a void).
  for (const frame of [0, state.frameCount - 1]) {
    await setSlider(page, frame);
    const view = await canvas.boundingBox();
    const spots = await page.evaluate((n) => Array.from({ length: n }, (_, i) => window.pliantViewer.screenOf(i)), nodes * nodes);
    const xs = spots.map((p) => p.x), ys = spots.map((p) => p.y);
    const inside = spots.every((p) => p.x >= view.x && p.x <= view.x + view.width && p.y >= view.y && p.y <= view.y + view.height);
    const spread = Math.max((Math.max(...xs) - Math.min(...xs)) / view.width, (Math.max(...ys) - Math.min(...ys)) / view.height);
    check(inside && spread > 0.4, `frame ${frame}: every particle is in view (${inside}), spread over ${(100 * spread).toFixed(0)} % of the view`);
  }

  // Plots: every probe kind with its title and unit.
  const plots = await page.evaluate(() => window.pliantViewer.plots);
  const expected = [
    ['convergence', 'solver convergence: strain residual', 'dimensionless'], ['energy', 'energy', 'J'], ['residual', 'residual', 'm for distance constraints'], ['force', 'constraint force', 'N'],
    ['intersections', 'intersecting triangle pairs', 'count'], ['particle', 'particle position', 'm'],
    ['particle', 'particle velocity', 'm/s'], ['centre of mass', 'centre of mass', 'm'],
    ['momentum', 'linear momentum', 'kg m/s'], ['momentum', 'angular momentum', 'kg m²/s'],
  ];
  for (const [kind, title, unit] of expected) {
    const plot = plots.find((p) => p.kind === kind && p.title.includes(title));
    check(plot !== undefined && plot.unit === unit && plot.title.includes(`(${unit}`),
      `the ${kind} probe has a plot "${title}" in ${unit} (${plot ? plot.title : plots.map((p) => p.title).join('; ')})`);
  }
  check(plots.filter((p) => p.title.includes('centre of mass')).every((p) => p.kind === 'centre of mass'),
    'only the centre-of-mass probe is titled "centre of mass"');
  // The convergence plot has one point per simulated frame (40), the probes one per frame with the first (41).
  check(plots.length === expected.length && plots.every((p) => p.points === (p.kind === 'convergence' ? 40 : 41) && p.series > 0),
    `every plot holds data (${plots.map((p) => `${p.title}: ${p.series} series x ${p.points} points`).join('; ')})`);
  const plotCanvases = page.locator('#probe-plots .plot canvas');
  check(await plotCanvases.count() === plots.length, 'one canvas per plot');
  for (let i = 0; i < await plotCanvases.count(); ++i) {
    const plot = decodePng(await plotCanvases.nth(i).screenshot());
    const ink = fractionUnlike(plot, [0x26, 0x2b, 0x32]);
    check(ink > 0.01, `plot "${plots[i].title}" has lines on it (${(100 * ink).toFixed(1)} % inked)`);
  }

  // The convergence plot reads viewer-data.json's strain residual of the shown (last) frame.
  const residuals = JSON.parse(readFileSync(path.join(out, 'viewer-data.json'), 'utf8')).convergence.strain_residual;
  const convergenceReadout = Number(await page.locator('#probe-plots .plot').first().locator('.keys b').first().textContent());
  check(Math.abs(convergenceReadout - residuals[residuals.length - 1]) <= 1e-3 * Math.max(1e-12, Math.abs(residuals[residuals.length - 1])),
    `the convergence plot shows the last frame's strain residual (${convergenceReadout} against ${residuals[residuals.length - 1]})`);
  const energyKeys = await page.locator('#probe-plots .plot', { hasText: 'energy' }).first().textContent();
  check(energyKeys.includes('elastic ½αf²') && energyKeys.includes('total = kinetic + gravitational + elastic'),
    'the energy plot labels the elastic energy ½αf² and says what the total is');

  // Log axes: ticks at readable values. The residual plot is on one (its zeros at rest left out);
  // the tick maker is also asked about the ranges that gave "1e-14.1" and "1e-0.1" before.
  const saneLog = /^([1-9]e-?\d+|0\.0*[1-9]|[1-9]0*)$/;
  const residualPlot = plots.find((p) => p.kind === 'residual');
  check(residualPlot && residualPlot.logScale && residualPlot.ticks.length >= 2 && residualPlot.ticks.every((t) => saneLog.test(t)),
    `the residual plot has a log axis with readable ticks (${residualPlot ? residualPlot.ticks.join(', ') : 'none'})`);
  const tickCases = await page.evaluate(() => [[-14.1, -0.1], [-3.3, -2.6], [-0.5, 0.7], [1.2, 1.25]].map(([lo, hi]) =>
    ({ lo, hi, labels: window.pliantViewer.tickLabels.log(lo, hi, 4) })));
  for (const { lo, hi, labels } of tickCases) {
    const values = labels.map(Number);
    check(labels.length >= 2 && labels.every((t) => /^(\d+(\.\d+)?|\d+e-?\d+)$/.test(t) && !/e-?\d+\./.test(t)) &&
      values.every((v) => Math.log10(v) >= lo - 1e-9 && Math.log10(v) <= hi + 1e-9),
    `log ticks over 1e${lo}..1e${hi}: ${labels.join(', ')}`);
  }
  const wide = tickCases[0].labels;
  check(wide.every((t) => /^1e-\d+$/.test(t)), `a log axis over 13 decades is labelled at whole decades (${wide.join(', ')})`);

  // Summary panel: the values of summary.json.
  check(await page.locator('#summary').isVisible(), 'the summary panel is shown');
  const rows = Object.fromEntries(await page.$$eval('#summary-cards tr', (trs) => trs.map((tr) => [tr.children[0].textContent, tr.children[1].textContent])));
  check(rows['scene'] === 'probe-cloth', `summary: scene ${rows['scene']}`);
  check(rows['last frame simulated'] === String(summary.last_frame) && rows['run to frame'] === String(summary.frames),
    `summary: last frame simulated ${rows['last frame simulated']}, run to frame ${rows['run to frame']}`);
  check(rows['substeps'] === String(summary.settings.substeps), `summary: substeps ${rows['substeps']} (summary.json: ${summary.settings.substeps})`);
  check(rows['particles'] === String(nodes * nodes), `summary: particles ${rows['particles']}`);
  check(rows['state hash'] === summary.state_hash, `summary: state hash ${rows['state hash']} (summary.json: ${summary.state_hash})`);
  check(rows['time step'] === `${Number(summary.settings.time_step_s.toPrecision(4))} s`, `summary: time step ${rows['time step']}`);
  check(/^\d+(\.\d+)? ms$/.test(rows['time per frame'] || ''), `summary: time per frame ${rows['time per frame']}`);
  const hasConvergence = summary.convergence !== undefined;
  check(await page.locator('#convergence').isVisible() === hasConvergence,
    `the convergence banner is ${hasConvergence ? '' : 'not '}shown, as summary.json has ${hasConvergence ? 'a' : 'no'} convergence section`);

  // Grid and axes: this scene has no collider.
  check(state.helpers && state.helpers.grid && state.helpers.axes && state.helpers.planeGrids === 0,
    `a scene without colliders gets a ground grid and axes (${JSON.stringify(state.helpers)})`);
  if (await page.locator('#helpers').isVisible()) {
    await page.uncheck('#helpers');
    await settle(page);
    const noGrid = decodePng(await canvas.screenshot());
    const gridPixels = fractionChanged(lastFrame, noGrid);
    check(gridPixels > 0.005, `the grid and axes are drawn (turning them off changes ${(100 * gridPixels).toFixed(1)} % of pixels)`);
    await page.check('#helpers');
  } else {
    check(false, 'the grid toggle is shown');
  }

  // Pick the cloth's middle particle on the first frame with a click where it is drawn.
  await setSlider(page, 0);
  const middle = (nodes / 2) * nodes + nodes / 2;
  const at = await page.evaluate((i) => window.pliantViewer.screenOf(i), middle);
  const box = await canvas.boundingBox();
  const ringColour = [0x3e, 0xe0, 0xff];
  const before = decodePng(await canvas.screenshot());
  await page.mouse.click(at.x, at.y);
  await settle(page);
  const picked = await page.evaluate(() => window.pliantViewer.picked);
  check(picked !== null && picked.index === middle, `a click on particle ${middle} picks it (${picked ? picked.index : 'nothing'})`);
  const after = decodePng(await canvas.screenshot());
  const ringBefore = countNear(before, at.x - box.x, at.y - box.y, 20, ringColour);
  const ringAfter = countNear(after, at.x - box.x, at.y - box.y, 20, ringColour);
  check(ringAfter > 30 && ringBefore < 5, `a ring marks the picked particle (${ringBefore} -> ${ringAfter} ring-coloured pixels around it)`);
  check(await page.locator('#picked').isVisible() && (await page.textContent('#picked-title')).includes(String(middle)),
    'the picked particle\'s plots are shown');
  const pickedCanvases = page.locator('#picked .plot canvas');
  check(await pickedCanvases.count() === 3, 'position, velocity and speed plots');
  for (let i = 0; i < await pickedCanvases.count(); ++i) {
    const ink = fractionUnlike(decodePng(await pickedCanvases.nth(i).screenshot()), [0x26, 0x2b, 0x32]);
    check(ink > 0.01, `picked particle plot ${picked.plots[i].quantity} has lines on it (${(100 * ink).toFixed(1)} % inked)`);
  }
  // Its legend at the last frame reads the positions of viewer-data.json and the velocity and speed between the last two frames.
  await setSlider(page, state.frameCount - 1);
  const readouts = (await page.$$eval('#picked .plot .keys b', (bs) => bs.map((b) => Number(b.textContent))));
  const track = particleTrack(path.join(out, 'viewer-data.json'), middle);
  const lastPosition = track[track.length - 1], previous = track[track.length - 2];
  const times = JSON.parse(readFileSync(path.join(out, 'viewer-data.json'), 'utf8')).frames.times_s;
  const velocity = [0, 1, 2].map((k) => (lastPosition[k] - previous[k]) / (times[times.length - 1] - times[times.length - 2]));
  const speed = Math.hypot(...velocity);
  const close = (a, b) => Math.abs(a - b) <= 1e-3 * Math.max(1, Math.abs(b));
  check(readouts.length === 7 && [0, 1, 2].every((k) => close(readouts[k], lastPosition[k]) && close(readouts[3 + k], velocity[k])) &&
    close(readouts[6], speed),
  `the plotted position, velocity and speed are the particle's (${readouts.join(', ')} against ` +
    `${[...lastPosition, ...velocity].map((v) => v.toFixed(4)).join(', ')}, ${speed.toFixed(4)})`);

  // Save PNG: a download of the view.
  const shown = decodePng(await canvas.screenshot());
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
  const saved = readFileSync(await download.path());
  check(download.suggestedFilename() === `probe-cloth-frame-40.png`, `the PNG is named after the scene and frame (${download.suggestedFilename()})`);
  check(saved.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])), 'the download is a PNG');
  const image = decodePng(saved);
  const differs = fractionChanged(image, shown);
  check(Math.abs(image.width - box.width) <= 1 && Math.abs(image.height - box.height) <= 1 && fractionOrange(image) > 0.005 && differs < 0.01,
    `the PNG is the view (${image.width} x ${image.height}, ${(100 * fractionOrange(image)).toFixed(1)} % cloth, ` +
    `${(100 * differs).toFixed(2)} % of pixels unlike the screenshot, ${shown.width} x ${shown.height})`);
  const exported = await page.evaluate(() => window.pliantViewer.lastExport);
  check(exported && exported.prefix === 'data:image/png;base64,', 'the PNG comes from a PNG data URL');

  // Colouring by speed and the wireframe change the picture too.
  const plain = shown;
  await page.selectOption('#colour', 'speed');
  await settle(page);
  const coloured = decodePng(await canvas.screenshot());
  check(fractionChanged(plain, coloured) > 0.01, 'colouring by speed changes the picture');
  await page.check('#wireframe');
  await settle(page);
  const wire = decodePng(await canvas.screenshot());
  check(fractionChanged(coloured, wire) > 0.01, 'the wireframe toggle changes the picture');

  // ------------------------------------------------------------ unconverged frames (summary.json)
  const conv = await open(path.join(converge, 'viewer.html'));
  const convState = await conv.evaluate(() => ({ convergence: window.pliantViewer.convergence, plots: window.pliantViewer.plots, error: window.pliantViewer.error }));
  check(convState.error === null && convState.convergence && convState.convergence.stretches === 2 && !convState.convergence.converged,
    `pliant view reads the convergence section (${JSON.stringify(convState.convergence)})`);
  const banner = conv.locator('#convergence');
  check(await banner.isVisible() && (await banner.textContent()).includes(advice) && (await banner.textContent()).includes('10–14'),
    'the advice and the unconverged frames are shown');
  check(convState.plots.every((p) => p.shaded.length === 2), `every plot shades the two stretches (${convState.plots.map((p) => p.shaded.length).join(', ')})`);
  const energyIndex = convState.plots.findIndex((p) => p.kind === 'energy');
  const energyImage = decodePng(await conv.locator('#probe-plots .plot canvas').nth(energyIndex).screenshot());
  const [x0, x1] = convState.plots[energyIndex].shaded[0] || [0, 0];
  const band = [Math.ceil(x0) + 1, Math.floor(x1) - 1];
  const shadedRed = redness(energyImage, band[0], band[1], 12, energyImage.height - 24);
  const clearRed = redness(energyImage, band[1] + 12, band[1] + 12 + (band[1] - band[0]), 12, energyImage.height - 24);
  check(band[1] > band[0] && shadedRed > clearRed + 8,
    `the first stretch is shaded red on the energy plot (red - blue ${shadedRed.toFixed(1)} inside, ${clearRed.toFixed(1)} beside)`);
  await setSlider(conv, 12);
  check(await conv.locator('#frame-flag').isVisible(), 'frame 12 is flagged "not converged"');
  await setSlider(conv, 20);
  check(!(await conv.locator('#frame-flag').isVisible()), 'frame 20 is not flagged');
  const convRows = Object.fromEntries(await conv.$$eval('#summary-cards tr', (trs) => trs.map((tr) => [tr.children[0].textContent, tr.children[1].textContent])));
  check(convRows['converged'] === 'no' && convRows['unconverged frames'] === '10–14, 30', `the summary's convergence card (${convRows['converged']}, ${convRows['unconverged frames']})`);

  // ------------------------------------------------------------ no summary.json
  const noSummary = await open(path.join(bare, 'viewer.html'));
  const bareState = await noSummary.evaluate(() => ({ ...window.pliantViewer }));
  check(bareState.error === null && bareState.summary === null && bareState.convergence === null && bareState.plots.length === plots.length &&
    bareState.plots.every((p) => p.shaded.length === 0) && !(await noSummary.locator('#summary').isVisible()) &&
    !(await noSummary.locator('#convergence').isVisible()), 'without summary.json the page works, with no summary and no shading');

  // ------------------------------------------------------------ a ground plane
  const planePage = await open(path.join(planeOut, 'viewer.html'));
  const planeState = await planePage.evaluate(() => ({ ...window.pliantViewer }));
  check(planeState.error === null && planeState.helpers.planeGrids === 1 && !planeState.helpers.axes && !planeState.helpers.grid,
    `a scene with a ground plane gets a grid on it and no axes (${JSON.stringify(planeState.helpers)})`);

  check(problems.length === 0, `no console errors and nothing fetched${problems.length ? ':\n  ' + problems.join('\n  ') : ''}`);

  // ------------------------------------------------------------ without WebGL the page says so
  const noGl = await context.newPage();
  await noGl.addInitScript(() => {
    const original = HTMLCanvasElement.prototype.getContext;
    HTMLCanvasElement.prototype.getContext = function (type, ...rest) {
      return /webgl/.test(type) ? null : original.call(this, type, ...rest);
    };
  });
  await noGl.goto(pathToFileURL(html).href);
  await noGl.waitForFunction(() => window.pliantViewer && window.pliantViewer.ready, null, { timeout: 30000 });
  const message = await noGl.locator('#message');
  check(await message.isVisible() && /WebGL/.test(await message.textContent()), 'without WebGL the page says so');
  check((await noGl.evaluate(() => window.pliantViewer.plots.length)) === plots.length, 'without WebGL the plots are still drawn');
  check(await noGl.locator('#export').isDisabled(), 'without WebGL there is no PNG to save');
} finally {
  await browser.close();
}
console.log(failures === 0 ? 'browser test passed' : `browser test: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
