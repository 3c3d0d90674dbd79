#!/usr/bin/env node
// ONNX Runtime (CPU, onnxruntime-node from npm, version pinned in package-lock.json) on the shape
// sweep's models: the cpu backend's peer (issue 26). Install here: `npm ci --ignore-scripts`
// (the install script only fetches GPU providers from nuget; the CPU runtime ships in the package).
//
//   node bench/ort_peer/ort_peer.js --models DIR --work DIR --out FILE [--batches 1,16,256]
//        [--seq 60] [--min-time-s 0.3] [--threads 1] [--only 00,07]
//
// DIR: bench/shape_sweep/export.py's output; WORK: the references (torch_peer.py, <name>/x_acc.npy
// and y_ref.npy). Per case: one session (intra- and inter-op threads = --threads, sequential,
// all graph optimizations), accuracy on x_acc against y_ref (relative L2), then per batch 4
// random-normal inputs rotated, warm-up >= 10 calls and >= 0.1 s, then >= 30 calls and
// >= --min-time-s, each await session.run() timed with hrtime; P50/P99 nearest rank (µs).
// Writes a JSON array after every case (system "onnxruntime").
"use strict";
const fs = require("fs");
const path = require("path");
const ort = require("onnxruntime-node");

function args() {
  const a = { batches: [1, 16, 256], seq: 60, minTime: 0.3, threads: 1, only: [] };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i++) {
    const k = v[i], n = () => v[++i];
    if (k === "--models") a.models = n();
    else if (k === "--work") a.work = n();
    else if (k === "--out") a.out = n();
    else if (k === "--batches") a.batches = n().split(",").map(Number);
    else if (k === "--seq") a.seq = Number(n());
    else if (k === "--min-time-s") a.minTime = Number(n());
    else if (k === "--threads") a.threads = Number(n());
    else if (k === "--only") a.only = n().split(",").filter((s) => s);
    else throw new Error("unknown argument " + k);
  }
  if (!a.models || !a.out) throw new Error("--models and --out are required");
  return a;
}

// float32 little-endian .npy (what torch_peer.py writes): {dims, data}.
function readNpyF32(file) {
  const b = fs.readFileSync(file);
  const hlen = b.readUInt16LE(8);
  const header = b.toString("latin1", 10, 10 + hlen);
  if (!header.includes("'<f4'")) throw new Error(file + ": not float32");
  const dims = header.match(/\(([^)]*)\)/)[1].split(",").map((s) => s.trim()).filter((s) => s).map(Number);
  const off = 10 + hlen;
  const n = dims.reduce((x, y) => x * y, 1);
  const data = new Float32Array(b.buffer.slice(b.byteOffset + off, b.byteOffset + off + 4 * n));
  return { dims, data };
}

function nearestRank(sorted, p) {
  const k = Math.min(Math.max(Math.ceil(p * sorted.length) - 1, 0), sorted.length - 1);
  return sorted[k];
}

function randn(n, seed) {  // xorshift32 + Box-Muller: fixed inputs per batch
  let s = seed >>> 0 || 1;
  const u = () => {
    s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
    return (s + 0.5) / 4294967296;
  };
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(u())), t = 2 * Math.PI * u();
    out[i] = r * Math.cos(t);
    if (i + 1 < n) out[i + 1] = r * Math.sin(t);
  }
  return out;
}

async function main() {
  const a = args();
  const listing = JSON.parse(fs.readFileSync(path.join(a.models, "cases.json"))).cases;
  const results = [{ system: "onnxruntime-info", version: ort.env.versions, threads: a.threads }];
  for (const c of listing) {
    if (a.only.length && !a.only.some((p) => c.name.startsWith(p))) continue;
    const t0 = Date.now();
    let session;
    try {
      session = await ort.InferenceSession.create(path.join(a.models, c.name, "model.onnx"), {
        intraOpNumThreads: a.threads, interOpNumThreads: a.threads, executionMode: "sequential",
        graphOptimizationLevel: "all" });
    } catch (e) {
      results.push({ system: "onnxruntime", case: { arch: c.name }, error: String(e).slice(0, 300) });
      continue;
    }
    const inName = session.inputNames[0], outName = session.outputNames[0];
    let accuracy = null;
    if (a.work && fs.existsSync(path.join(a.work, c.name, "x_acc.npy"))) {
      const x = readNpyF32(path.join(a.work, c.name, "x_acc.npy"));
      const y = readNpyF32(path.join(a.work, c.name, "y_ref.npy"));
      const out = (await session.run({ [inName]: new ort.Tensor("float32", x.data, x.dims) }))[outName].data;
      let num = 0, den = 0;
      for (let i = 0; i < y.data.length; i++) { const d = out[i] - y.data[i]; num += d * d; den += y.data[i] * y.data[i]; }
      accuracy = { rel_err: Math.sqrt(num) / Math.max(Math.sqrt(den), 1e-30) };
    }
    for (const b of a.batches) {
      const dims = [b, a.seq, c.features];
      const n = b * a.seq * c.features;
      const pool = [0, 1, 2, 3].map((q) => new ort.Tensor("float32", randn(n, b * 7 + q + 1), dims));
      let q = 0;
      const run = () => session.run({ [inName]: pool[q++ % 4] });
      const wEnd = Date.now() + 100;
      for (let w = 0; w < 10 || Date.now() < wEnd; w++) await run();
      const us = [];
      const end = Date.now() + a.minTime * 1000;
      while (us.length < 30 || Date.now() < end) {
        const r0 = process.hrtime.bigint();
        await run();
        us.push(Number(process.hrtime.bigint() - r0) / 1000);
      }
      us.sort((x, y) => x - y);
      const m = { p50_us: nearestRank(us, 0.5), p99_us: nearestRank(us, 0.99), iterations: us.length };
      results.push({ system: "onnxruntime", case: { arch: c.name, precision: "fp32", batch: b, seq: a.seq },
                     metrics: m, accuracy });
      console.log(`onnxruntime ${c.name.padEnd(48)} ${String(b).padStart(5)} ${m.p50_us.toFixed(1).padStart(10)}`);
    }
    console.log(`  ${c.name}: ${((Date.now() - t0) / 1000).toFixed(1)} s, rel err ${accuracy ? accuracy.rel_err.toExponential(2) : "-"}`);
    fs.writeFileSync(a.out, JSON.stringify(results, null, 1));
  }
  fs.writeFileSync(a.out, JSON.stringify(results, null, 1));
}

main().catch((e) => { console.error(e); process.exit(1); });
