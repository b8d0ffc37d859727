"""Command line: ``python -m particles {simulate,error,energy,stable-dt} ...``.

Errors and exit codes are ``userio.cli``'s: bad input prints one line ``particles:
error: ...`` and exits with status 2, an I/O failure with status 1, Ctrl-C with 130.
Options, ``--param`` values and every output path are checked before the run; outputs
are written to temporaries and renamed only when all of them are ready, so a failed
run changes no file.
"""
import inspect
import io
import json
import math
import pathlib

import numpy as np
from userio import cli as ucli
from userio.limits import check_int, check_number
from userio.outputs import Outputs

from . import limits
from .errors import ParticlesError, UnstableSimulationError
from .integrators import INTEGRATORS, ORDERS, canonical_name
from .simulate import check_step     # numpy only

# the spring networks' modules (cloth, springs) import the Numba kernels: they are imported
# after the arguments are parsed, so --help and argument errors stay light
SYSTEMS = ("circle", "spring", "pendulum", "chain", "cloth")


def _factory(system):
    """The function or class that builds the system named ``system``."""
    from .cloth import cloth
    from .springs import chain, pendulum
    from .systems import Circle, DampedSpring
    return {"circle": Circle, "spring": DampedSpring, "pendulum": pendulum, "chain": chain,
            "cloth": cloth}[system]


def _item(item):
    """An option value as it can appear in a one-line message."""
    return item if item.isprintable() and len(item) <= 80 else limits.short(item, 80)


def parse_params(system, items):
    """``["k=4", "grid=[32,32]", "pin=corners"]`` -> kwargs for the system's factory
    (values are JSON, or plain strings when they are not valid JSON)."""
    factory = _factory(system)
    params = inspect.signature(factory).parameters
    known = list(params)
    kwargs = {}
    for item in items or ():
        key, sep, text = item.partition("=")
        key = key.strip()
        where = f"--param {_item(item)}"
        if not sep or not key:
            raise ParticlesError(where, "expected KEY=VALUE")
        if key not in known:
            raise ParticlesError(where, f"{system} has no parameter {limits.short(key)}; "
                                 "known: " + ", ".join(known))
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        except RecursionError:
            raise ParticlesError(where, "JSON value nested too deeply") from None
        except ValueError as exc:             # an integer with more than 4300 digits
            raise ParticlesError(where, str(exc).split(";")[0]) from None
        default = params[key].default
        number = (int, float)
        if isinstance(default, number) and not isinstance(default, bool) and \
                not (isinstance(value, number) and not isinstance(value, bool)):
            raise ParticlesError(where, "expected a number")
        if isinstance(default, bool) and not isinstance(value, bool):
            raise ParticlesError(where, "expected true or false")
        if isinstance(default, (tuple, list)) and not isinstance(value, list):
            raise ParticlesError(where, f"expected a JSON list like "
                                 f"{json.dumps(list(default))}")
        kwargs[key] = value
    return kwargs


def make_system(system, params):
    """Build a system by name with ``--param`` overrides; bad values become errors."""
    try:
        return _factory(system)(**params)
    except ParticlesError:
        raise
    except (TypeError, ValueError, OverflowError) as exc:
        text = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise ParticlesError(f"{system} parameters", text[:200]) from None


def _check_integrator(name, option="--integrator"):
    try:
        return canonical_name(name)
    except ParticlesError as exc:
        raise ParticlesError(option, exc.message) from None


def _check_tolerances(args):
    lo, hi = limits.TOL_RANGE
    for option in ("rtol", "atol"):
        check_number(getattr(args, option), f"--{option}", lo=lo, hi=hi, error=ParticlesError)


def _particles(system, params):
    """Number of particles a system will have (0 for the ODE systems), from its checked
    size parameters, before it is built."""
    if system == "cloth":
        from .cloth import DEFAULTS, cloth_grid
        nx, ny = cloth_grid(params.get("grid", DEFAULTS["grid"]))
        return nx * ny
    if system == "chain":
        default = inspect.signature(_factory("chain")).parameters["count"].default
        return limits.count(params.get("count", default), "chain", "count", 1,
                            limits.MAX_GRID ** 2) + 1
    return 2 if system == "pendulum" else 0


def _mesh_paths(folder, count):
    return [folder / f"frame_{k:05d}.obj" for k in range(count)]


def cmd_simulate(args):
    from .cloth import cloth_mesh
    from .mesh import format_obj
    from .simulate import simulate
    from .springs import SpringNetwork
    integ = _check_integrator(args.integrator)
    dt = check_step(args.dt, "--dt")
    _count(args.steps, "--steps", 0, limits.MAX_STEPS)
    _count(args.every, "--every", 1)
    _check_tolerances(args)
    outs = Outputs()
    out = pathlib.Path(args.output or f"{args.system}.npz")
    outs.add(out, "-o", (".npz",))
    if args.mesh_dir:
        if args.system != "cloth":
            raise ParticlesError("--mesh-dir", "meshes are written for cloth only")
        folder = pathlib.Path(args.mesh_dir)
        if folder.exists() and not folder.is_dir():
            raise ParticlesError("--mesh-dir", "is a file, not a folder", file=str(folder))
    params = parse_params(args.system, args.param)
    count = args.steps // args.every + 1 + (1 if args.steps % args.every else 0)
    particles = _particles(args.system, params)
    n = 6 * particles if particles else 2
    nbytes = 4 * count * (n + 2) * 8                    # states, positions/velocities, npz
    if args.mesh_dir:
        nbytes += count * 150 * particles               # OBJ text: v, vn, two faces each
    limits.memory(nbytes, "simulate", f"{count} recorded states of {n} numbers"
                  + (" and their OBJ meshes" if args.mesh_dir else ""))
    system = make_system(args.system, params)
    frames = _mesh_paths(pathlib.Path(args.mesh_dir), count) if args.mesh_dir else []
    for path in frames:
        outs.add(path, "--mesh-dir")
    options = {"rtol": args.rtol, "atol": args.atol} if integ == "rk45" else {}
    t, states = simulate(system, integ, dt, args.steps, every=args.every, **options)
    data = {"t": t, "states": states, "system": args.system, "integrator": integ, "dt": dt,
            "energy": np.array([system.energy(x) for x in states])}
    if isinstance(system, SpringNetwork):
        data["positions"] = states[:, :3 * system.n].reshape(len(states), system.n, 3)
        data["velocities"] = states[:, 3 * system.n:].reshape(len(states), system.n, 3)
        data["pinned"] = ~system.free
        data["springs"] = system.springs
    if args.system == "cloth":
        data["faces"] = system.faces
        data["grid"] = np.array(system.grid)
    for key, value in data.items():                  # states are checked by simulate()
        if isinstance(value, np.ndarray) and value.dtype.kind == "f" and \
                not np.all(np.isfinite(value)):
            name = {"t": "times", "energy": "energies"}.get(key, key)
            raise ParticlesError("simulate", f"the recorded {name} are not finite (--dt or "
                                 "parameter values too large)")
    buf = io.BytesIO()
    np.savez_compressed(buf, **data)
    outs.set(out, buf.getvalue())
    for path, x in zip(frames, states):
        outs.set(path, format_obj(*cloth_mesh(system, x)).encode("utf-8"))
    outs.commit()
    print(f"{args.system}: {args.steps} steps of {integ} at dt={dt:g} to t={t[-1]:g} s; "
          f"{len(t)} states -> {out}")
    if frames:
        print(f"{len(frames)} OBJ meshes with smooth normals -> {args.mesh_dir}/frame_*.obj")
    return 0


def _count(value, option, lo, hi=None):
    return check_int(value, option, lo, hi, error=ParticlesError)


def _integrator_list(text):
    if not text:
        return None
    names = [_check_integrator(n.strip(), "--integrators") for n in text.split(",") if n.strip()]
    if not names:
        raise ParticlesError("--integrators", f"no integrator names in {_item(text)!r}")
    return names


def _study_outputs(args):
    outs = Outputs()
    out = pathlib.Path(args.output)
    outs.add(out, "-o", (".png",))
    numbers = pathlib.Path(args.json) if args.json else out.with_suffix(".json")
    outs.add(numbers, "--json", (".json",))
    return outs, out, numbers


def _write_study(outs, out, numbers, result, plot):
    from .study import json_text
    buf = io.BytesIO()
    plot(result, buf)
    outs.set(out, buf.getvalue())
    outs.set(numbers, json_text(result).encode("utf-8"))
    outs.commit()


def cmd_error(args):
    from .study import convergence, plot_convergence
    integrators = _integrator_list(args.integrators)
    outs, out, numbers = _study_outputs(args)
    result = convergence(args.system, integrators)
    _write_study(outs, out, numbers, result, plot_convergence)
    print(f"{args.system}: global error at T={result['T']:g} s against {result['reference']}")
    print(f"{'integrator':18s} {'measured':>8s} {'theory':>6s}")
    for name, r in result["integrators"].items():
        print(f"{name:18s} {r['order']:8.3f} {r['theory']:6d}")
    print(f"plot -> {out}, numbers -> {numbers}")
    return 0


def cmd_energy(args):
    from .study import energy_drift, plot_energy
    dt = check_step(args.dt, "--dt")
    _count(args.steps, "--steps", 1, limits.MAX_STEPS)
    integrators = _integrator_list(args.integrators)
    outs, out, numbers = _study_outputs(args)
    result = energy_drift(args.system, integrators, dt=dt, steps=args.steps)
    _write_study(outs, out, numbers, result, plot_energy)
    print(f"{args.system}: relative energy error after {args.steps} steps of dt={dt:g}")
    for name, r in result["integrators"].items():
        print(f"{name:18s} final {r['rel_error'][-1]:10.3e}  max {max(r['rel_error']):10.3e}")
    print(f"plot -> {out}, numbers -> {numbers}")
    return 0


def cmd_stable_dt(args):
    from .simulate import stable_dt_limit
    from .springs import SpringNetwork
    integ = _check_integrator(args.integrator)
    lo = check_step(args.lo, "--lo")
    hi = check_step(args.hi, "--hi")
    duration = check_number(args.duration, "--duration", lo=0.0, lo_open=True,
                            error=ParticlesError)
    if not hi > lo:
        raise ParticlesError("--hi", f"must be greater than --lo ({lo:g}), got {hi:g}")
    if duration / lo > limits.MAX_STEPS:
        raise ParticlesError("--lo", f"--duration / --lo = {duration / lo:.3g} steps is more "
                             f"than {limits.MAX_STEPS}; raise --lo or lower --duration")
    system = make_system(args.system, parse_params(args.system, args.param))
    if not isinstance(system, SpringNetwork):
        raise ParticlesError("stable-dt", "works on spring networks (pendulum, chain, cloth)")
    try:
        lo, hi = stable_dt_limit(system, integ, duration, lo, hi)
    except UnstableSimulationError:
        raise
    except ParticlesError as exc:
        if "unstable already" in exc.message:
            raise ParticlesError("--lo", exc.message) from None
        raise
    extra = "" if math.isfinite(hi) else " (stable up to --hi)"
    print(f"{args.system} with {integ}: stable at dt={lo:.4g}, unstable at dt={hi:.4g}{extra}")
    return 0


def build_parser():
    names = ", ".join(f"{n} (order {ORDERS[n]})" for n in INTEGRATORS)
    p = ucli.parser("python -m particles",
                    "Particle-system simulation: run systems, study integrator error.",
                    epilog=f"Integrators: {names}.")
    sub = ucli.subparsers(p, dest="command", required=True, metavar="COMMAND")
    tol_lo, tol_hi = limits.TOL_RANGE

    s = sub.add_parser("simulate", help="run a system and write its states (npz)",
                       description="Run a system and write its states to an .npz file "
                       "(t, states, energy; positions/velocities for particle systems; "
                       "faces for cloth).")
    s.add_argument("system", choices=list(SYSTEMS), help="system to simulate")
    s.add_argument("--integrator", default="rk4", help="integrator name")
    s.add_argument("--dt", type=float, default=0.005, help="step size in s")
    s.add_argument("--steps", type=int, default=1000,
                   help=f"number of steps, 0..{limits.MAX_STEPS}")
    s.add_argument("--every", type=int, default=1, help="keep every K-th state")
    s.add_argument("--param", action="append", metavar="KEY=VALUE",
                   help="system parameter, JSON value, repeatable "
                        "(e.g. --param grid=[32,32] --param pin=corners)")
    s.add_argument("--rtol", type=float, default=1e-6,
                   help=f"rk45 relative tolerance, {tol_lo:g}..{tol_hi:g}")
    s.add_argument("--atol", type=float, default=1e-9,
                   help=f"rk45 absolute tolerance, {tol_lo:g}..{tol_hi:g}")
    s.add_argument("-o", "--output", help="output .npz file (when not given: SYSTEM.npz)")
    s.add_argument("--mesh-dir", help="cloth: also write each kept state as "
                   "DIR/frame_NNNNN.obj with smooth normals")
    s.set_defaults(func=cmd_simulate)

    e = sub.add_parser("error", help="plot global error against step size",
                       description="Global error at T against step size for every "
                       "integrator (log-log, fitted slopes in the legend), plus a JSON file "
                       "with the numbers.")
    e.add_argument("--system", required=True, choices=["circle", "spring", "pendulum"],
                   help="the system whose closed form (or scipy reference) is compared")
    e.add_argument("-o", "--output", required=True, help="output PNG (.png)")
    e.add_argument("--json", help="numbers as JSON (when not given: OUTPUT with .json)")
    e.add_argument("--integrators", help="comma-separated subset (when not given: all)")
    e.set_defaults(func=cmd_error)

    g = sub.add_parser("energy", help="plot energy drift over a long run",
                       description="Relative energy error over a long run of each "
                       "integrator on a conservative system.")
    g.add_argument("--system", default="oscillator",
                   choices=["circle", "oscillator", "pendulum"], help="conservative system")
    g.add_argument("--dt", type=float, default=0.01, help="step size in s")
    g.add_argument("--steps", type=int, default=100_000,
                   help=f"steps, 1..{limits.MAX_STEPS}")
    g.add_argument("-o", "--output", required=True, help="output PNG (.png)")
    g.add_argument("--json", help="numbers as JSON (when not given: OUTPUT with .json)")
    g.add_argument("--integrators", help="comma-separated subset (when not given: all)")
    g.set_defaults(func=cmd_energy)

    d = sub.add_parser("stable-dt", help="bisect for an integrator's largest stable dt",
                       description="Bisect for the largest step at which a spring network "
                       "stays finite with speeds below 100 m/s for DURATION seconds.")
    d.add_argument("system", choices=["pendulum", "chain", "cloth"],
                   help="spring network to test")
    d.add_argument("--integrator", default="rk4", help="integrator name")
    d.add_argument("--duration", type=float, default=1.0, help="simulated seconds")
    d.add_argument("--lo", type=float, default=1e-5, help="a stable dt in s")
    d.add_argument("--hi", type=float, default=0.1, help="upper end of the search in s")
    d.add_argument("--param", action="append", metavar="KEY=VALUE", help="as for simulate")
    d.set_defaults(func=cmd_stable_dt)
    return p


def _run(args):
    with np.errstate(all="ignore"):            # results are checked; no warnings on stderr
        return args.func(args)


def main(argv=None):
    """Run the command line; returns the exit status (argparse exits itself on bad
    arguments, with status 2)."""
    args = build_parser().parse_args(argv)
    return ucli.run("particles", _run, args)
