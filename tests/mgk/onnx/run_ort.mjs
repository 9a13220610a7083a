// Oracle for `npukit mgk export`: ONNX Runtime (its WebAssembly build, so no
// native download) runs a model on seeded inputs of the declared shapes.
// usage: node run_ort.mjs MODEL.onnx [--mask OUTPUT] [--inputs IN.json] [--dump OUT.json]
// Every output must be finite; with --mask, sigmoid(OUTPUT) must lie in [0, 1].
// --inputs takes the inputs ({name: {dims, data}}) instead of seeded ones;
// --dump writes every output the same way. Prints one JSON line: output
// name -> {dims, min, max}.
import * as ort from 'onnxruntime-web';
import { readFileSync, writeFileSync } from 'fs';

const [model, ...rest] = process.argv.slice(2);
const opt = (name) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : null;
};
const maskName = opt('--mask');
const given = opt('--inputs') ? JSON.parse(readFileSync(opt('--inputs'), 'utf8')) : {};
ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const session = await ort.InferenceSession.create(readFileSync(model));
let seed = 20240611;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};
const feeds = {};
for (const meta of session.inputMetadata) {
  const n = meta.shape.reduce((a, b) => a * b, 1);
  const data = given[meta.name] ? Float32Array.from(given[meta.name].data)
                                : Float32Array.from({ length: n }, () => rand() * 2 - 1);
  feeds[meta.name] = new ort.Tensor('float32', data, meta.shape);
}
const out = await session.run(feeds);
const report = {};
let ok = true;
for (const name of session.outputNames) {
  const t = out[name];
  let lo = Infinity, hi = -Infinity;
  for (const v of t.data) {
    if (!Number.isFinite(v)) ok = false;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  report[name] = { dims: t.dims, min: lo, max: hi };
}
if (maskName) {
  if (!out[maskName]) {
    console.error(`no output ${maskName}`);
    process.exit(1);
  }
  let lo = Infinity, hi = -Infinity;
  for (const v of out[maskName].data) {
    const m = 1 / (1 + Math.exp(-v));
    lo = Math.min(lo, m);
    hi = Math.max(hi, m);
  }
  report.mask = { min: lo, max: hi };
  if (!(lo >= 0 && hi <= 1)) ok = false;
}
if (opt('--dump')) {
  const all = {};
  for (const name of session.outputNames) all[name] = { dims: out[name].dims, data: Array.from(out[name].data) };
  writeFileSync(opt('--dump'), JSON.stringify(all));
}
console.log(JSON.stringify(report));
process.exit(ok ? 0 : 1);
