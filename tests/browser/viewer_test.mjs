// End-to-end test of the viewer page in a real browser: Debian's Chromium, headless, with software
// WebGL (SwiftShader), driven by playwright-core from npm. It runs `pliant run --html`, opens the page
// from file:// and checks, from screenshots decoded here (not from the page's own word):
//   - no console error, no page error, no request other than file:, blob: or data:;
//   - the 3D canvas is not blank (its pixels differ from the background);
//   - moving the frame slider changes the picture;
//   - the probe plots hold data (several series with many points, and ink on their canvases);
//   - without WebGL the page says so instead of staying blank.
// Usage: node viewer_test.mjs PLIANT_EXECUTABLE WORK_FOLDER
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
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
function fractionChanged(a, b, threshold = 30) {
  if (a.width !== b.width || a.height !== b.height) return 1;
  let count = 0;
  const n = a.width * a.height;
  for (let i = 0; i < n; ++i) if (distance(rgbAt(a, i), rgbAt(b, i)) > threshold) count += 1;
  return count / n;
}

// ---------------------------------------------------------------- the page
if (!existsSync(chromiumPath)) {
  console.error(`FAIL ${chromiumPath} is missing: run scripts/test.sh (it installs Debian's chromium) or apt-get install chromium`);
  process.exit(1);
}
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });
const out = path.join(work, 'run');
const html = path.join(out, 'viewer.html');
// The default scene records energy, residual and constraint-force probes; 40 frames are enough to fall.
const printed = execFileSync(pliant, ['run', 'cloth', '--frames', '40', '--out', out, '--html', html, '--quiet', '--no-frames'],
  { encoding: 'utf8' });
check(printed.includes(`viewer: ${html}`), 'pliant run --html prints the page path');
check(existsSync(html) && statSync(html).size > 100000, `the page exists (${existsSync(html) ? statSync(html).size : 0} bytes)`);

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
    '--disable-background-networking', '--disable-component-update', '--no-first-run'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console error: ${message.text()}`); });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('request', (request) => {
    if (!/^(file|blob|data):/.test(request.url())) problems.push(`request to ${request.url()}`);
  });
  await page.goto(pathToFileURL(html).href);
  await page.waitForFunction(() => window.pliantViewer && window.pliantViewer.ready, null, { timeout: 30000 });
  const state = await page.evaluate(() => ({ ...window.pliantViewer }));
  check(state.error === null, `the page started without error${state.error ? ': ' + state.error : ''}`);
  check(state.webgl === true, 'the 3D view runs on (software) WebGL');
  check(state.frameCount === 41, `the page holds 41 frames (${state.frameCount})`);

  // Pause, then show the first and the last frame through the slider, as a user would.
  if ((await page.textContent('#play')).trim() === 'Pause') await page.click('#play');
  const settle = () => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
  const setSlider = async (value) => {
    await page.$eval('#frame', (slider, v) => {
      slider.value = String(v);
      slider.dispatchEvent(new Event('input', { bubbles: true }));
    }, value);
    await settle();
  };
  const canvas = page.locator('#scene');
  await setSlider(0);
  const first = decodePng(await canvas.screenshot());
  const background = [0x15, 0x18, 0x1c];
  const inked = fractionUnlike(first, background);
  check(inked > 0.02, `the canvas is not blank: ${(100 * inked).toFixed(1)} % of pixels differ from the background`);
  await setSlider(state.frameCount - 1);
  check(await page.evaluate(() => window.pliantViewer.frame) === state.frameCount - 1, 'the slider selects the last frame');
  const lastFrame = decodePng(await canvas.screenshot());
  const changed = fractionChanged(first, lastFrame);
  check(changed > 0.01, `the frame slider changes the picture: ${(100 * changed).toFixed(1)} % of pixels changed`);

  // Plots: energy, residual and force probes, each with many points, and drawn.
  const kinds = state.plots.map((p) => p.kind);
  for (const kind of ['energy', 'residual', 'force'])
    check(kinds.includes(kind), `a ${kind} plot is shown (${kinds.join(', ')})`);
  check(state.plots.length > 0 && state.plots.every((p) => p.points >= 41 && p.series > 0),
    `every plot holds data (${state.plots.map((p) => `${p.name}: ${p.series} series x ${p.points} points`).join('; ')})`);
  const plotCanvases = page.locator('#plots .plot canvas');
  check(await plotCanvases.count() === state.plots.length, 'one canvas per plot');
  for (let i = 0; i < await plotCanvases.count(); ++i) {
    const plot = decodePng(await plotCanvases.nth(i).screenshot());
    const ink = fractionUnlike(plot, [0x27, 0x2c, 0x33]);
    check(ink > 0.01, `plot ${state.plots[i].name} has lines on it (${(100 * ink).toFixed(1)} % inked)`);
  }

  // Colour by stretch and wireframe change the picture too.
  await page.selectOption('#colour', 'speed');
  await settle();
  const coloured = decodePng(await canvas.screenshot());
  check(fractionChanged(lastFrame, coloured) > 0.01, 'colouring by speed changes the picture');
  await page.check('#wireframe');
  await settle();
  const wire = decodePng(await canvas.screenshot());
  check(fractionChanged(coloured, wire) > 0.01, 'the wireframe toggle changes the picture');
  check(problems.length === 0, `no console errors and nothing fetched${problems.length ? ':\n  ' + problems.join('\n  ') : ''}`);

  // Without WebGL the page says so.
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
  check((await noGl.evaluate(() => window.pliantViewer.plots.length)) === state.plots.length, 'without WebGL the plots are still drawn');
} finally {
  await browser.close();
}
console.log(failures === 0 ? 'browser test passed' : `browser test: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
