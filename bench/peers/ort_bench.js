#!/usr/bin/env node
// ONNX Runtime CPU peer for bench/engine_bench.sh (onnxruntime-node, CPU execution provider).
//   node bench/peers/ort_bench.js --models DIR/models.json [--threads 1] [--batches 1,16,256]
//        [--seq 60] [--iters 1000,200,50] [--out FILE]
// Loads each model's .onnx, runs every batch with random normal inputs (a pool of 8 distinct
// tensors, rotated), warms up, then times each session.run() one by one with a monotonic clock
// and prints a JSON array of BENCHMARKS.md results (system "onnxruntime-cpu").
// threads: intraOpNumThreads; 0 = ORT's default (one per core). interOpNumThreads is always 1
// (sequential execution mode).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

function arg(name, dflt) {
  const i = process.argv.indexOf('--' + name);
  return i >= 0 ? process.argv[i + 1] : dflt;
}

// Box-Muller normal samples from a seeded xorshift (random, not constant, reproducible).
let seed = 0x9e3779b9;
function uniform() {
  seed ^= seed << 13; seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5; seed >>>= 0;
  return (seed + 0.5) / 4294967296;
}
function normal(n) {
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a[i] = Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  }
  return a;
}

function pct(sorted, p) {
  // nearest-rank percentile
  const k = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[k];
}

async function main() {
  const listing = JSON.parse(fs.readFileSync(arg('models'), 'utf8'));
  const threads = parseInt(arg('threads', '1'), 10);
  const batches = arg('batches', '1,16,256').split(',').map(Number);
  const iters = arg('iters', '1000,200,50').split(',').map(Number);
  const seq = parseInt(arg('seq', '60'), 10);
  const only = arg('only', '');
  const results = [];
  for (const m of listing.models) {
    if (only && !only.split(',').includes(m.model)) continue;
    const opts = {
      executionProviders: ['cpu'],
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
      interOpNumThreads: 1,
    };
    if (threads > 0) opts.intraOpNumThreads = threads;
    const session = await ort.InferenceSession.create(m.onnx, opts);
    const inName = session.inputNames[0];
    for (let bi = 0; bi < batches.length; bi++) {
      const b = batches[bi];
      const n = iters[Math.min(bi, iters.length - 1)];
      const pool = [];
      for (let i = 0; i < 8; i++) {
        pool.push(new ort.Tensor('float32', normal(b * seq * m.features), [b, seq, m.features]));
      }
      // Warm-up: at least 20 runs and 0.3 s.
      const w0 = process.hrtime.bigint();
      for (let i = 0; i < 20 || Number(process.hrtime.bigint() - w0) < 3e8; i++) {
        await session.run({ [inName]: pool[i % 8] });
      }
      const lat = new Float64Array(n);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < n; i++) {
        const s = process.hrtime.bigint();
        await session.run({ [inName]: pool[i % 8] });
        lat[i] = Number(process.hrtime.bigint() - s) / 1e3;
      }
      const wall_s = Number(process.hrtime.bigint() - t0) / 1e9;
      const sorted = Array.from(lat).sort((x, y) => x - y);
      const p50 = pct(sorted, 0.5);
      results.push({
        system: 'onnxruntime-cpu',
        case: { model: m.model, precision: 'fp32', batch: b, seq: seq,
                threads: threads > 0 ? threads : require('os').cpus().length },
        metrics: { p50_us: p50, p99_us: pct(sorted, 0.99), p999_us: pct(sorted, 0.999),
                   throughput_per_s: b * 1e6 / p50, iterations: n,
                   wall_throughput_per_s: b * n / wall_s },
        notes: `onnxruntime-node ${ort.env.versions.common}, CPU EP, intraOpNumThreads=` +
               `${threads > 0 ? threads : 'default'}, interOpNumThreads=1, graph opt all`,
      });
      process.stderr.write(`ort: ${m.model} b${b} threads ${threads || 'default'}: p50 ${p50.toFixed(1)} us\n`);
    }
    await session.release();
  }
  const text = JSON.stringify(results, null, 1);
  const out = arg('out', '');
  if (out) fs.writeFileSync(out, text + '\n'); else process.stdout.write(text + '\n');
}

main().catch((e) => { process.stderr.write(`ort_bench: ${e.stack || e}\n`); process.exit(1); });
