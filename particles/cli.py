"""Command line: ``python -m particles {simulate,error,energy,stable-dt} ...``.

Bad input prints one line ``particles: error: ...`` and exits with status 2.
"""
import argparse
import inspect
import json
import math
import pathlib
import sys

import numpy as np

from .cloth import cloth, cloth_mesh
from .errors import ParticlesError
from .integrators import INTEGRATORS, ORDERS, canonical_name
from .mesh import write_obj
from .simulate import check_step, simulate, stable_dt_limit
from .springs import SpringNetwork, chain, pendulum
from .systems import Circle, DampedSpring

SYSTEMS = {"circle": Circle, "spring": DampedSpring, "pendulum": pendulum, "chain": chain,
           "cloth": cloth}


def parse_params(system, items):
    """``["k=4", "grid=[32,32]", "pin=corners"]`` -> kwargs for the system's factory
    (values are JSON, or plain strings when they are not valid JSON)."""
    factory = SYSTEMS[system]
    params = inspect.signature(factory).parameters
    known = list(params)
    kwargs = {}
    for item in items or ():
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ParticlesError(f"--param {item}", "expected KEY=VALUE")
        if key not in known:
            raise ParticlesError(f"--param {item}", f"{system} has no parameter {key!r}; "
                                 "known: " + ", ".join(known))
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        default = params[key].default
        number = (int, float)
        if isinstance(default, number) and not isinstance(default, bool) and \
                not (isinstance(value, number) and not isinstance(value, bool)):
            raise ParticlesError(f"--param {item}", "expected a number")
        if isinstance(default, bool) and not isinstance(value, bool):
            raise ParticlesError(f"--param {item}", "expected true or false")
        if isinstance(default, (tuple, list)) and not isinstance(value, list):
            raise ParticlesError(f"--param {item}", f"expected a JSON list like "
                                 f"{json.dumps(list(default))}")
        kwargs[key] = value
    return kwargs


def make_system(system, params):
    """Build a system by name with ``--param`` overrides; bad values become errors."""
    try:
        return SYSTEMS[system](**params)
    except ParticlesError:
        raise
    except (TypeError, ValueError) as exc:
        raise ParticlesError(f"{system} parameters", str(exc)) from None


def _check_integrator(name):
    try:
        return canonical_name(name)
    except ParticlesError as exc:
        raise ParticlesError("--integrator", exc.message) from None


def cmd_simulate(args):
    integ = _check_integrator(args.integrator)
    dt = check_step(args.dt, "--dt")
    if args.steps < 0:
        raise ParticlesError("--steps", f"must be >= 0, got {args.steps}")
    if args.every < 1:
        raise ParticlesError("--every", f"must be >= 1, got {args.every}")
    system = make_system(args.system, parse_params(args.system, args.param))
    options = {"rtol": args.rtol, "atol": args.atol} if integ == "rk45" else {}
    t, states = simulate(system, integ, dt, args.steps, every=args.every, **options)
    out = pathlib.Path(args.output or f"{args.system}.npz")
    data = {"t": t, "states": states, "system": args.system, "integrator": integ, "dt": dt,
            "energy": np.array([system.energy(x) for x in states])}
    if isinstance(system, SpringNetwork):
        n = system.n
        data["positions"] = states[:, :3 * n].reshape(len(states), n, 3)
        data["velocities"] = states[:, 3 * n:].reshape(len(states), n, 3)
        data["pinned"] = ~system.free
        data["springs"] = system.springs
    if args.system == "cloth":
        data["faces"] = system.faces
        data["grid"] = np.array(system.grid)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **data)
    print(f"{args.system}: {args.steps} steps of {integ} at dt={dt:g} to t={t[-1]:g} s; "
          f"{len(t)} states -> {out}")
    if args.mesh_dir:
        if args.system != "cloth":
            raise ParticlesError("--mesh-dir", "meshes are written for cloth only")
        folder = pathlib.Path(args.mesh_dir)
        folder.mkdir(parents=True, exist_ok=True)
        for k, x in enumerate(states):
            write_obj(folder / f"frame_{k:05d}.obj", *cloth_mesh(system, x))
        print(f"{len(states)} OBJ meshes with smooth normals -> {folder}/frame_*.obj")
    return 0


def _integrator_list(text):
    if not text:
        return None
    return [_check_integrator(n.strip()) for n in text.split(",") if n.strip()]


def cmd_error(args):
    from .study import convergence, plot_convergence, write_json
    result = convergence(args.system, _integrator_list(args.integrators))
    out = pathlib.Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot_convergence(result, out)
    numbers = pathlib.Path(args.json) if args.json else out.with_suffix(".json")
    write_json(result, numbers)
    print(f"{args.system}: global error at T={result['T']:g} s against {result['reference']}")
    print(f"{'integrator':18s} {'measured':>8s} {'theory':>6s}")
    for name, r in result["integrators"].items():
        print(f"{name:18s} {r['order']:8.3f} {r['theory']:6d}")
    print(f"plot -> {out}, numbers -> {numbers}")
    return 0


def cmd_energy(args):
    from .study import energy_drift, plot_energy, write_json
    dt = check_step(args.dt, "--dt")
    if args.steps < 1:
        raise ParticlesError("--steps", f"must be >= 1, got {args.steps}")
    result = energy_drift(args.system, _integrator_list(args.integrators), dt=dt,
                          steps=args.steps)
    out = pathlib.Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot_energy(result, out)
    numbers = pathlib.Path(args.json) if args.json else out.with_suffix(".json")
    write_json(result, numbers)
    print(f"{args.system}: relative energy error after {args.steps} steps of dt={dt:g}")
    for name, r in result["integrators"].items():
        print(f"{name:18s} final {r['rel_error'][-1]:10.3e}  max {max(r['rel_error']):10.3e}")
    print(f"plot -> {out}, numbers -> {numbers}")
    return 0


def cmd_stable_dt(args):
    integ = _check_integrator(args.integrator)
    system = make_system(args.system, parse_params(args.system, args.param))
    if not isinstance(system, SpringNetwork):
        raise ParticlesError("stable-dt", "works on spring networks (pendulum, chain, cloth)")
    lo, hi = stable_dt_limit(system, integ, args.duration, args.lo, args.hi)
    extra = "" if math.isfinite(hi) else " (stable up to --hi)"
    print(f"{args.system} with {integ}: stable at dt={lo:.4g}, unstable at dt={hi:.4g}{extra}")
    return 0


def build_parser():
    names = ", ".join(f"{n} (order {ORDERS[n]})" for n in INTEGRATORS)
    p = argparse.ArgumentParser(
        prog="python -m particles",
        description="Particle-system simulation: run systems, study integrator error.",
        epilog=f"Integrators: {names}.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("simulate", help="run a system and write its states (npz)",
                       description="Run a system and write its states to an .npz file "
                       "(t, states, energy; positions/velocities for particle systems; "
                       "faces for cloth).")
    s.add_argument("system", choices=list(SYSTEMS), help="system to simulate")
    s.add_argument("--integrator", default="rk4", help="integrator name (default rk4)")
    s.add_argument("--dt", type=float, default=0.005, help="step size in s (default 0.005)")
    s.add_argument("--steps", type=int, default=1000, help="number of steps (default 1000)")
    s.add_argument("--every", type=int, default=1, help="keep every K-th state (default 1)")
    s.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="system parameter, JSON value, repeatable "
                        "(e.g. --param grid=[32,32] --param pin=corners)")
    s.add_argument("--rtol", type=float, default=1e-6, help="rk45 relative tolerance")
    s.add_argument("--atol", type=float, default=1e-9, help="rk45 absolute tolerance")
    s.add_argument("-o", "--output", help="output .npz (default SYSTEM.npz)")
    s.add_argument("--mesh-dir", help="cloth: also write each kept state as "
                   "DIR/frame_NNNNN.obj with smooth normals")
    s.set_defaults(func=cmd_simulate)

    e = sub.add_parser("error", help="plot global error against step size",
                       description="Global error at T against step size for every "
                       "integrator (log-log, fitted slopes in the legend), plus a JSON file "
                       "with the numbers.")
    e.add_argument("--system", required=True, choices=["circle", "spring", "pendulum"])
    e.add_argument("-o", "--output", required=True, help="output PNG")
    e.add_argument("--json", help="numbers as JSON (default: OUTPUT with .json)")
    e.add_argument("--integrators", help="comma-separated subset (default: all)")
    e.set_defaults(func=cmd_error)

    g = sub.add_parser("energy", help="plot energy drift over a long run",
                       description="Relative energy error over a long run of each "
                       "integrator on a conservative system.")
    g.add_argument("--system", default="oscillator",
                   choices=["circle", "oscillator", "pendulum"])
    g.add_argument("--dt", type=float, default=0.01, help="step size (default 0.01)")
    g.add_argument("--steps", type=int, default=100_000, help="steps (default 100000)")
    g.add_argument("-o", "--output", required=True, help="output PNG")
    g.add_argument("--json", help="numbers as JSON (default: OUTPUT with .json)")
    g.add_argument("--integrators", help="comma-separated subset (default: all)")
    g.set_defaults(func=cmd_energy)

    d = sub.add_parser("stable-dt", help="bisect for an integrator's largest stable dt",
                       description="Bisect for the largest step at which a spring network "
                       "stays finite with speeds below 100 m/s for DURATION seconds.")
    d.add_argument("system", choices=["pendulum", "chain", "cloth"])
    d.add_argument("--integrator", default="rk4")
    d.add_argument("--duration", type=float, default=1.0, help="simulated seconds (default 1)")
    d.add_argument("--lo", type=float, default=1e-5, help="a stable dt (default 1e-5)")
    d.add_argument("--hi", type=float, default=0.1, help="upper end of the search (0.1)")
    d.add_argument("--param", action="append", metavar="KEY=VALUE", help="as for simulate")
    d.set_defaults(func=cmd_stable_dt)
    return p


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ParticlesError as exc:
        print(f"particles: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"particles: error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return 2
