r"""Adaptive sampling against uniform sampling: RMSE and time on the Cornell box.

    python benchmarks/bench_adaptive.py [--size 256] [--ref-spp 4096] [--rounds 3]

The reference is our own render at ``--ref-spp`` (cached in
benchmarks/output/cornell_<size>_ours_<spp>.npy). Each configuration renders with seeds
0 .. rounds-1, interleaved with the others (the machine may be shared); the table gives
the RMSE over the seeds and the best time. Uniform rows at several spp, adaptive rows at
several thresholds (``docs/adaptive-sampling.md``). Prints the CPU and the load.
"""
import argparse
import os
import pathlib
import time

import numpy as np

import raytrace
from reports import cpu_name

HERE = pathlib.Path(__file__).resolve().parent
SCENE = HERE.parent / "scenes" / "cornell_box.json"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--ref-spp", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    scene = raytrace.load_scene(SCENE)
    size = dict(width=args.size, height=args.size)
    cached = HERE / "output" / f"cornell_{args.size}_ours_{args.ref_spp}.npy"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        print(f"rendering the reference ({args.ref_spp} spp) ...", flush=True)
        np.save(cached, np.asarray(raytrace.render(scene, spp=args.ref_spp, seed=12345, **size)))
    ref = np.load(cached).astype(np.float64)
    raytrace.render(scene, width=8, height=8, spp=1)
    raytrace.render(scene, width=8, height=8, noise_threshold=0.5, max_spp=32)      # compile
    configs = {f"uniform {n} spp": dict(spp=n) for n in (16, 20, 24, 32, 48)}
    configs.update({f"adaptive {t}": dict(noise_threshold=t, max_spp=1024) for t in (0.3, 0.2, 0.15, 0.1)})
    best = {k: float("inf") for k in configs}
    errors, spp = {k: [] for k in configs}, {k: [] for k in configs}
    for seed in range(args.rounds):
        for name, kw in configs.items():
            t0 = time.perf_counter()
            img = raytrace.render(scene, seed=seed, **size, **kw)
            best[name] = min(best[name], time.perf_counter() - t0)
            errors[name].append(float(np.sqrt(((img - ref) ** 2).mean())))
            spp[name].append(img.info.spp_mean)
    print(f"Cornell box {args.size}x{args.size}, reference {args.ref_spp} spp (ours); {cpu_name()}, "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'render':<22} {'mean spp':>9} {'RMSE':>8} {'best s':>8}")
    for name in configs:
        print(f"{name:<22} {np.mean(spp[name]):9.1f} {np.sqrt(np.mean(np.square(errors[name]))):8.4f} "
              f"{best[name]:8.3f}")


if __name__ == "__main__":
    main()
