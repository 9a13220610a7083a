// LiteRT.js latency for npukit-bench (bench/bench_tflite.c): runs a model
// with @litertjs/core (TFLite in WebAssembly, XNNPACK) under Node, one
// thread, once to warm up and then N times on the same input.
//
//   node litert_repeat.mjs MODEL --input X.npy --repeat N [--modules DIR]
//
// Prints "litert.js VERSION: MODEL: N runs, 1 thread: min X ms, median Y ms",
// the line of tests/oracle/litert_run.mjs --repeat, which the benchmark uses
// instead when it exists. --modules: the node_modules folder holding the
// package (default $NPK_LITERT_MODULES, then ./node_modules here).
// Exit: 0 done; 2 usage; 3 the model or input cannot run here; 4 LiteRT.js
// is not installed or does not load.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const fail = (code, msg) => {
  process.stderr.write(`litert_repeat: ${msg}\n`);
  process.exit(code);
};

const args = process.argv.slice(2);
let model = null, input = null, repeat = 0, modules = process.env.NPK_LITERT_MODULES;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--input' && i + 1 < args.length) input = args[++i];
  else if (args[i] === '--repeat' && i + 1 < args.length) repeat = Number(args[++i]);
  else if (args[i] === '--modules' && i + 1 < args.length) modules = args[++i];
  else if (!model && !args[i].startsWith('--')) model = args[i];
  else fail(2, `unexpected argument ${args[i]}`);
}
if (!model || !input || !Number.isInteger(repeat) || repeat < 1)
  fail(2, 'usage: litert_repeat.mjs MODEL --input X.npy --repeat N [--modules DIR]');
modules ??= path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules');

// The input: a version 1 .npy of uint8 or float32 (what LiteRT.js's Tensor takes).
const npy = fs.readFileSync(input);
const hlen = npy.readUInt16LE(8), header = npy.subarray(10, 10 + hlen).toString('latin1');
const descr = /'descr'\s*:\s*'([^']*)'/.exec(header)?.[1];
const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)?.[1].split(',').filter((s) => s.trim()).map(Number);
const raw = npy.subarray(10 + hlen);
const data = descr === '|u1' ? new Uint8Array(raw) : descr === '<f4' ? new Float32Array(raw.buffer.slice(raw.byteOffset)) : null;
if (npy[6] !== 1 || !data || !shape) fail(3, `${input}: only version 1 .npy of uint8 or float32`);

// The package is written for browsers and workers: its loader calls
// importScripts() and expects self, require and __dirname as in a worker.
const pkg = path.resolve(modules, '@litertjs', 'core');
if (!fs.existsSync(path.join(pkg, 'package.json'))) fail(4, `@litertjs/core is not installed in ${modules}`);
const version = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version;
const wasmDir = path.join(pkg, 'wasm') + path.sep;
globalThis.self = globalThis;
globalThis.require = createRequire(path.join(pkg, 'package.json'));
globalThis.__dirname = wasmDir;
globalThis.importScripts = (url) => {
  const p = url.startsWith('file://') ? fileURLToPath(url) : url;
  vm.runInThisContext(fs.readFileSync(p, 'utf8') + '\n;globalThis.ModuleFactory = ModuleFactory;', { filename: p });
};
const quiet = [console.log, console.warn, console.error];
console.log = console.warn = console.error = () => {}; // its WebGPU probe and wasm log lines
let lrt, compiled;
try {
  lrt = await import(pathToFileURL(path.join(pkg, 'dist', 'index.js')).href);
  await lrt.loadLiteRt(wasmDir, { threads: false });
} catch (e) {
  [console.log, console.warn, console.error] = quiet;
  fail(4, `LiteRT.js does not load: ${e.message}`);
}
try {
  compiled = await lrt.loadAndCompile(new Uint8Array(fs.readFileSync(model)), { accelerator: 'wasm', cpuOptions: { numThreads: 1 } });
} catch (e) {
  [console.log, console.warn, console.error] = quiet;
  fail(3, `LiteRT.js cannot compile ${model}: ${e.message ?? e}`);
}
[console.log, console.warn, console.error] = quiet;

const tensor = new lrt.Tensor(data, shape);
const run = async () => {
  let outs = await compiled.run([tensor]);
  if (!Array.isArray(outs)) outs = Object.values(outs);
  outs.forEach((o) => o.delete());
};
await run(); // warm-up, not timed
const ms = [];
for (let r = 0; r < repeat; r++) {
  const t0 = performance.now();
  await run();
  ms.push(performance.now() - t0);
}
ms.sort((a, b) => a - b);
const median = ms.length % 2 ? ms[(ms.length - 1) / 2] : (ms[ms.length / 2 - 1] + ms[ms.length / 2]) / 2;
const r3 = (x) => Math.round(x * 1000) / 1000;
process.stdout.write(`litert.js ${version}: ${path.basename(model)}: ${repeat} runs, 1 thread: min ${r3(ms[0])} ms, median ${r3(median)} ms\n`);
