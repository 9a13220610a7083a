// Independent TFLite oracle for npukit's tests: runs a model with LiteRT.js
// (npm @litertjs/core, Google's TFLite runtime compiled to WebAssembly,
// XNNPACK CPU kernels) under Node, one thread.
//
//   node litert_run.mjs MODEL [--input [NAME=]X.npy ...] --outdir DIR
//        [--outputs NAME,...] [--repeat N] [--modules DIR]
//
// Writes DIR/<sanitized output name>.npy per output and DIR/manifest.json.
// Inputs are bound by tensor name (NAME=) or, without a name, in order.
// --repeat N runs the model once to warm up, then N times on the same input,
// and prints min and median milliseconds of one run (latency mode, for the
// benchmark program; without --input the inputs are zeros).
// --modules: the node_modules folder holding @litertjs/core (default
// $NPK_LITERT_MODULES, then ./node_modules next to this script).
//
//   node litert_run.mjs --jobs FILE [--modules DIR]
//
// runs many models in one process (the per-operator tests run hundreds):
// FILE has one job per line, a JSON array of the arguments above (with
// --outdir). A job that cannot run writes DIR/status.json with its exit
// status and reason instead of outputs; the other jobs still run.
//
// The runner drives LiteRT's WebAssembly API below the package's Tensor
// class, which only knows float32, int32 and uint8: int8, int16 and int64
// tensors are passed as raw bytes.
//
// Exit status: 0 done; 2 usage or bad input file; 3 LiteRT.js cannot run
// this model (the message says why); 4 LiteRT.js is not installed or does
// not load.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const EXIT_USAGE = 2, EXIT_CANNOT = 3, EXIT_MISSING = 4;

class Fail extends Error {
  constructor(code, msg) {
    super(msg);
    this.code = code;
  }
}

// ---- .npy (version 1.0-3.0, little-endian or byte-less types, C order) ----

// LiteRT element type -> [npy descr, bytes per element, name]
const TYPES = {
  1: ['<f4', 4, 'float32'],
  2: ['<i4', 4, 'int32'],
  3: ['|u1', 1, 'uint8'],
  4: ['<i8', 8, 'int64'],
  6: ['|b1', 1, 'bool'],
  7: ['<i2', 2, 'int16'],
  9: ['|i1', 1, 'int8'],
  10: ['<f2', 2, 'float16'],
};
const DESCR_ALIASES = { '<u1': '|u1', '<i1': '|i1', '|b1': '|b1', '<b1': '|b1' };

function parseNpy(buf, file) {
  const magic = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]);
  if (buf.length < 10 || !buf.subarray(0, 6).equals(magic)) throw new Fail(EXIT_USAGE, `${file}: not a .npy file`);
  const major = buf[6];
  let hlen, hstart;
  if (major === 1) {
    hlen = buf.readUInt16LE(8);
    hstart = 10;
  } else if (major === 2 || major === 3) {
    if (buf.length < 12) throw new Fail(EXIT_USAGE, `${file}: truncated .npy header`);
    hlen = buf.readUInt32LE(8);
    hstart = 12;
  } else {
    throw new Fail(EXIT_USAGE, `${file}: .npy version ${major} not supported`);
  }
  if (hstart + hlen > buf.length) throw new Fail(EXIT_USAGE, `${file}: truncated .npy header`);
  const header = buf.subarray(hstart, hstart + hlen).toString('latin1');
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const order = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !order || !shape) throw new Fail(EXIT_USAGE, `${file}: unreadable .npy header: ${header.trim()}`);
  if (order[1] === 'True') throw new Fail(EXIT_USAGE, `${file}: Fortran-order .npy not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map(Number);
  if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw new Fail(EXIT_USAGE, `${file}: bad shape (${shape[1]})`);
  const d = DESCR_ALIASES[descr[1]] ?? descr[1];
  const type = Object.values(TYPES).find((t) => t[0] === d);
  if (!type) throw new Fail(EXIT_USAGE, `${file}: dtype ${descr[1]} not supported`);
  const count = dims.reduce((a, b) => a * b, 1);
  const start = hstart + hlen;
  if (buf.length - start !== count * type[1])
    throw new Fail(EXIT_USAGE, `${file}: ${buf.length - start} data bytes, shape (${dims}) of ${descr[1]} needs ${count * type[1]}`);
  return { descr: d, dims, data: buf.subarray(start) };
}

function encodeNpy(descr, dims, data) {
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]).copy(pre);
  pre.writeUInt16LE(header.length, 8);
  return Buffer.concat([pre, Buffer.from(header, 'latin1'), data]);
}

// The output file name: every byte outside [A-Za-z0-9._-] becomes '_'; a
// name longer than 120 bytes is cut there and ".<output index>" appended;
// a clash appends ".<output index>" (the same rule in armnn_run.py and
// tests/common/oracle.c).
export function sanitize(name) {
  const s = Array.from(Buffer.from(name, 'utf8'), (b) => (/[A-Za-z0-9._-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '_')).join('');
  return s.length && s !== '.' && s !== '..' ? s : '_';
}

// ---- arguments ----

function parseArgs(argv) {
  const a = { model: null, inputs: [], outdir: null, outputs: null, repeat: 0, modules: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Fail(EXIT_USAGE, `${k} needs a value`);
      return argv[++i];
    };
    if (k === '--input') {
      const v = val();
      const eq = v.indexOf('=');
      a.inputs.push(eq > 0 && !v.slice(0, eq).endsWith('.npy') ? { name: v.slice(0, eq), file: v.slice(eq + 1) } : { name: null, file: v });
    } else if (k === '--outdir') a.outdir = val();
    else if (k === '--outputs') a.outputs = val().split(',').filter((s) => s.length);
    else if (k === '--repeat') {
      a.repeat = Number(val());
      if (!Number.isInteger(a.repeat) || a.repeat < 1) throw new Fail(EXIT_USAGE, '--repeat needs a positive integer');
    } else if (k === '--modules') a.modules = val();
    else if (k.startsWith('--')) throw new Fail(EXIT_USAGE, `unknown option ${k}`);
    else if (!a.model) a.model = k;
    else throw new Fail(EXIT_USAGE, `unexpected argument ${k}`);
  }
  if (!a.model) throw new Fail(EXIT_USAGE, 'usage: litert_run.mjs MODEL --input [NAME=]X.npy ... --outdir DIR [--outputs NAME,...] [--repeat N]');
  if (!a.outdir && !a.repeat) throw new Fail(EXIT_USAGE, '--outdir DIR is required (unless --repeat)');
  return a;
}

// ---- loading LiteRT.js under Node ----

// LiteRT's WebAssembly module binds console.log/console.error when it loads
// and reports problems there (e.g. an unresolved custom op) while the call
// itself may still succeed. Route them through here: keep the lines, echo
// them only with NPK_ORACLE_VERBOSE=1, and turn ERROR lines into failures.
const wasmLog = { lines: [], echo: process.env.NPK_ORACLE_VERBOSE === '1' };
const consoleError = console.error;
function hookConsole() {
  const sink = (...a) => {
    wasmLog.lines.push(a.map(String).join(' '));
    if (wasmLog.echo) consoleError(...a);
  };
  console.log = sink;
  console.error = sink;
}
// The ERROR lines logged since mark, joined; '' when none.
function wasmErrors(mark) {
  return wasmLog.lines
    .slice(mark)
    .filter((l) => /^ERROR/.test(l))
    .map((l) => l.replace(/^ERROR:\s*(\[[^\]]*\]\s*)?/, '').replace(/\s*See instructions:.*$/s, '').trim())
    .join('; ');
}

// The package is written for browsers and web workers: its loader calls
// importScripts() and expects self, require and __dirname as in a worker.
async function loadLiteRt(modulesDir) {
  const pkg = path.resolve(modulesDir, '@litertjs', 'core');
  const wasmDir = path.join(pkg, 'wasm') + path.sep;
  if (!fs.existsSync(path.join(pkg, 'package.json')))
    throw new Fail(EXIT_MISSING, `@litertjs/core is not installed in ${modulesDir} (scripts/oracle-deps.sh BUILD installs it)`);
  const version = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8')).version;
  globalThis.self = globalThis;
  globalThis.require = createRequire(path.join(pkg, 'package.json'));
  globalThis.__dirname = wasmDir;
  globalThis.importScripts = (url) => {
    const p = url.startsWith('file://') ? fileURLToPath(url) : url;
    vm.runInThisContext(fs.readFileSync(p, 'utf8') + '\n;globalThis.ModuleFactory = ModuleFactory;', { filename: p });
  };
  // Its WebGPU probe warns on stderr under Node; nothing is wrong.
  const warn = console.warn;
  console.warn = () => {};
  hookConsole();
  try {
    const lrt = await import(pathToFileURL(path.join(pkg, 'dist', 'index.js')).href);
    const rt = await lrt.loadLiteRt(wasmDir, { threads: false });
    return { rt, version };
  } catch (e) {
    throw new Fail(EXIT_MISSING, `LiteRT.js does not load: ${e.message}`);
  } finally {
    console.warn = warn;
  }
}

const vec = (v) => {
  const out = [];
  for (let i = 0; i < v.size(); i++) out.push(v.get(i));
  v.delete();
  return out;
};

// Element type, dimensions and byte size of a LiteRtRankedTensorType (freed
// here). A dynamic dimension (-1, from shape_signature) has no byte size yet.
function tensorType(tt) {
  const layout = tt.layout();
  const dims = vec(layout.dimensions());
  layout.delete();
  const et = tt.elementType().value;
  const bytes = dims.every((d) => d >= 0) ? tt.bytes() : -1;
  tt.delete();
  return { et, dims, bytes };
}

function rankedType(w, et, dims) {
  const v = new w.VectorInt32();
  dims.forEach((d) => v.push_back(d));
  const layout = w.LiteRtLayout.create(v);
  v.delete();
  const tt = w.LiteRtRankedTensorType.create({ value: et }, layout);
  layout.delete();
  return tt;
}

// ---- running ----

// Inputs given as NAME= go to that input; the others fill the remaining
// inputs in order. Without inputs (latency mode only) every input is zero.
function bindInputs(names, inputs, optional) {
  const bound = names.map(() => null);
  for (const x of inputs.filter((y) => y.name)) {
    const i = names.indexOf(x.name);
    if (i < 0) throw new Fail(EXIT_USAGE, `the model has no input named ${x.name} (inputs: ${names.join(', ')})`);
    if (bound[i]) throw new Fail(EXIT_USAGE, `input ${x.name} given twice`);
    bound[i] = x;
  }
  const rest = inputs.filter((y) => !y.name);
  for (let i = 0; i < names.length && rest.length; i++) if (!bound[i]) bound[i] = rest.shift();
  if (rest.length) throw new Fail(EXIT_USAGE, `the model has ${names.length} inputs (${names.join(', ')}), ${inputs.length} given`);
  const missing = names.filter((_, i) => !bound[i]);
  if (missing.length && !(optional && inputs.length === 0)) throw new Fail(EXIT_USAGE, `no value for input ${missing.join(', ')}`);
  return bound;
}

// One model run: read the model and inputs, compile, run, write the
// outputs. Everything the wasm module allocates for it is released before
// returning (batch mode runs many models in one process).
async function runJob(rt, version, args, jobs) {
  let modelBytes;
  try {
    modelBytes = fs.readFileSync(args.model);
  } catch (e) {
    throw new Fail(EXIT_USAGE, `${args.model}: ${e.message}`);
  }
  const inputs = args.inputs.map((x) => {
    let b;
    try {
      b = fs.readFileSync(x.file);
    } catch (e) {
      throw new Fail(EXIT_USAGE, `${x.file}: ${e.message}`);
    }
    return { ...x, npy: parseNpy(b, x.file) };
  });

  const w = rt.liteRtWasm;
  const env = rt.getDefaultEnvironment();
  const ptr = w._malloc(modelBytes.length);
  w.HEAPU8.set(modelBytes, ptr);
  let model, compiled;
  const bufs = [];
  const mark0 = wasmLog.lines.length;
  try {
    await runCompiled();
  } finally {
    bufs.forEach((b) => b.delete());
    compiled?.delete?.();
    model?.delete?.();
    w._free(ptr);
    if (jobs) wasmLog.lines.length = mark0; // keep the log of one job only
  }

  async function runCompiled() {
    const t0 = performance.now();
    try {
      model = w.loadModel(env.liteRtEnvironment, ptr, modelBytes.length);
      compiled = await w.compileModel(env.liteRtEnvironment, model, {
        environment: env,
        accelerator: 'wasm',
        cpuOptions: { numThreads: 1 },
        gpuOptions: {},
        webNNOptions: {},
      });
    } catch (e) {
      throw new Fail(EXIT_CANNOT, `LiteRT.js cannot compile the model: ${wasmErrors(mark0) || errText(w, e)}`);
    }
    const compileMs = performance.now() - t0;
    const problems = wasmErrors(mark0);
    if (problems) throw new Fail(EXIT_CANNOT, `LiteRT.js cannot run the model: ${problems}`);
    if (model.getNumSignatures() < 1) throw new Fail(EXIT_CANNOT, 'the model has no signature');
    const sig = model.getSignature(0);
    const inNames = vec(sig.inputNames());
    const outNames = vec(sig.outputNames());
    const inTypes = inNames.map((_, i) => tensorType(model.getInputTensorType(0, i)));
    const outTypes = outNames.map((_, i) => tensorType(model.getOutputTensorType(0, i)));
    const bound = bindInputs(inNames, inputs, args.repeat > 0);
    for (let i = 0; i < inNames.length; i++) {
      const t = inTypes[i];
      const want = TYPES[t.et];
      if (!want) throw new Fail(EXIT_CANNOT, `input ${inNames[i]}: element type ${t.et} not handled by this runner`);
      const x = bound[i];
      // A dynamic dimension takes the given array's size (1 without one).
      const dims = t.dims.map((d, k) => (d >= 0 ? d : x && x.npy.dims.length === t.dims.length ? x.npy.dims[k] : 1));
      const count = dims.reduce((a, b) => a * b, 1);
      if (x) {
        if (x.npy.descr !== want[0]) throw new Fail(EXIT_USAGE, `${x.file}: dtype ${x.npy.descr}, input ${inNames[i]} is ${want[2]}`);
        if (x.npy.dims.join(',') !== dims.join(','))
          throw new Fail(EXIT_USAGE, `${x.file}: shape (${x.npy.dims}), input ${inNames[i]} is (${t.dims})`);
      }
      const data = x ? x.npy.data : Buffer.alloc(count * want[1]); // latency mode without input: zeros
      const tt = rankedType(w, t.et, dims);
      let b;
      try {
        b = w.LiteRtTensorBuffer.createManaged(env.liteRtEnvironment, w.LiteRtTensorBufferType.HOST_MEMORY, tt, data.length);
      } catch (e) {
        throw new Fail(EXIT_CANNOT, `input ${inNames[i]}: no host buffer: ${errText(w, e)}`);
      } finally {
        tt.delete();
      }
      const p = b.lock(w.LiteRtTensorBufferLockMode.WRITE);
      w.HEAPU8.set(data, p);
      b.unlock();
      bufs.push(b);
    }
    for (const o of outTypes) {
      if (!TYPES[o.et]) throw new Fail(EXIT_CANNOT, `output element type ${o.et} not handled by this runner`);
    }

    const runOnce = async () => {
      const mark = wasmLog.lines.length;
      let outs;
      try {
        outs = await compiled.run(0, bufs);
      } catch (e) {
        throw new Fail(EXIT_CANNOT, `LiteRT.js cannot run the model: ${wasmErrors(mark) || errText(w, e)}`);
      }
      const problems = wasmErrors(mark);
      if (problems) throw new Fail(EXIT_CANNOT, `LiteRT.js cannot run the model: ${problems}`);
      return outs;
    };
    const times = [];
    let outs;
    const n = Math.max(args.repeat, 1);
    if (args.repeat) (await runOnce()).forEach((o) => o.delete()); // warm-up, not timed
    for (let r = 0; r < n; r++) {
      if (outs) outs.forEach((o) => o.delete());
      const t1 = performance.now();
      outs = await runOnce();
      times.push(performance.now() - t1);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted.length % 2 ? sorted[(sorted.length - 1) >> 1] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    const manifest = {
      oracle: 'litert.js',
      version,
      model: path.resolve(args.model),
      threads: 1,
      compile_ms: round(compileMs),
      runs: times.length,
      ms: times.map(round),
      min_ms: round(sorted[0]),
      median_ms: round(median),
      inputs: inNames.map((name, i) => ({ name, file: bound[i]?.file ?? null })),
      outputs: [],
    };

    if (args.outdir) {
      fs.mkdirSync(args.outdir, { recursive: true });
      const want = args.outputs;
      if (want) {
        const missing = want.filter((x) => !outNames.includes(x));
        if (missing.length) throw new Fail(EXIT_CANNOT, `not an output of the model: ${missing.join(', ')} (LiteRT.js gives only the model's outputs: ${outNames.join(', ')})`);
      }
      const used = new Set();
      for (let i = 0; i < outNames.length; i++) {
        if (want && !want.includes(outNames[i])) continue;
        const o = outs[i];
        const tt = tensorType(o.tensorType());
        const [descr, , dtype] = TYPES[tt.et];
        const p = o.lock(w.LiteRtTensorBufferLockMode.READ);
        const bytes = Buffer.from(w.HEAPU8.slice(p, p + o.packedSize()));
        o.unlock();
        if (o.offset() !== 0 || o.size() !== o.packedSize() || bytes.length !== tt.bytes)
          throw new Fail(EXIT_CANNOT, `output ${outNames[i]}: strided or padded buffer`);
        let file = sanitize(outNames[i]);
        if (file.length > 120) file = `${file.slice(0, 120)}.${i}`; // long fused names
        if (used.has(file)) file += `.${i}`;
        used.add(file);
        file += '.npy';
        writeAtomic(path.join(args.outdir, file), encodeNpy(descr, tt.dims, bytes));
        manifest.outputs.push({ name: outNames[i], index: i, file, shape: tt.dims, dtype });
      }
      writeAtomic(path.join(args.outdir, 'manifest.json'), Buffer.from(JSON.stringify(manifest, null, 1) + '\n'));
    }
    if (args.repeat) {
      process.stdout.write(`litert.js ${version}: ${path.basename(args.model)}: ${times.length} runs, 1 thread: min ${round(sorted[0])} ms, median ${round(median)} ms\n`);
    }
    outs.forEach((o) => o.delete());
  }
}

// Batch mode (--jobs FILE): one job per line, a JSON array of the arguments
// of one run (MODEL --input ... --outdir DIR ...). LiteRT.js loads once; a
// job it cannot run leaves DIR/status.json ({"status": 3, "why": ...}, 2 for
// a usage error) instead of outputs, and the next job runs.
async function main() {
  const argv = process.argv.slice(2);
  const j = argv.indexOf('--jobs');
  if (j < 0) {
    const args = parseArgs(argv);
    const { rt, version } = await loadLiteRt(modulesDir(args.modules));
    await runJob(rt, version, args, false);
    return;
  }
  if (j + 1 >= argv.length) throw new Fail(EXIT_USAGE, '--jobs needs a value');
  const rest = argv.filter((_, i) => i !== j && i !== j + 1);
  const mi = rest.indexOf('--modules');
  if (rest.length !== (mi >= 0 ? 2 : 0)) throw new Fail(EXIT_USAGE, 'with --jobs FILE only --modules DIR may be given');
  let lines;
  try {
    lines = fs.readFileSync(argv[j + 1], 'utf8').split('\n').filter((l) => l.trim().length);
  } catch (e) {
    throw new Fail(EXIT_USAGE, `${argv[j + 1]}: ${e.message}`);
  }
  const jobs = lines.map((l, i) => {
    const a = JSON.parse(l);
    if (!Array.isArray(a) || a.some((x) => typeof x !== 'string')) throw new Fail(EXIT_USAGE, `${argv[j + 1]}: line ${i + 1} is not an array of strings`);
    return a;
  });
  const { rt, version } = await loadLiteRt(modulesDir(mi >= 0 ? rest[mi + 1] : null));
  for (const a of jobs) {
    let args = null;
    try {
      args = parseArgs(a);
      if (!args.outdir || args.repeat) throw new Fail(EXIT_USAGE, 'a job needs --outdir and no --repeat');
      await runJob(rt, version, args, true);
    } catch (e) {
      if (!args?.outdir) throw e;
      const status = e instanceof Fail ? e.code : 1;
      fs.mkdirSync(args.outdir, { recursive: true });
      writeAtomic(path.join(args.outdir, 'status.json'), Buffer.from(JSON.stringify({ status, why: e instanceof Fail ? e.message : String(e.stack ?? e) }) + '\n'));
    }
  }
}

function modulesDir(given) {
  return given ?? process.env.NPK_LITERT_MODULES ?? path.join(path.dirname(fileURLToPath(import.meta.url)), 'node_modules');
}

const round = (x) => Math.round(x * 1000) / 1000;

function writeAtomic(file, data) {
  const tmp = `${file}.tmp${process.pid}`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

// Emscripten throws C++ exceptions as numbers or objects; say what we can.
function errText(w, e) {
  if (e instanceof Error) return e.message;
  if (typeof e === 'number' && w.getExceptionMessage) {
    try {
      return w.getExceptionMessage(e).join(': ');
    } catch {
      /* fall through */
    }
  }
  return String(e);
}

try {
  await main();
} catch (e) {
  if (!(e instanceof Fail) && !wasmLog.echo && wasmLog.lines.length) process.stderr.write(wasmLog.lines.join('\n') + '\n');
  process.stderr.write(`litert_run: ${e instanceof Fail ? e.message : e.stack ?? e}\n`);
  process.exit(e instanceof Fail ? e.code : 1);
}
