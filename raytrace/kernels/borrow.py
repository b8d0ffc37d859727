"""Borrowed arrays: array views that Numba does not reference-count.

Numba counts references to every array a function binds: passing a NamedTuple of 24
arrays to a helper (or inlining one, which re-binds its arguments) costs 24 atomic
increments and decrements of counters that all threads share. Per ray bounce that was
half of the path tracer's time. ``borrow(x)`` returns ``x`` (an array, or a tuple /
NamedTuple of arrays and scalars) re-typed as :class:`BorrowedArray`: the same memory
layout, but its ``meminfo`` member is typed as a plain pointer (and set to NULL), so no
reference counting is generated for it at all. Everything else (indexing, ``shape``,
views, ``sum``...) works as for a normal array.

Rules: call it at the top of a kernel on arrays that its caller keeps alive for the
whole call; never return a borrowed array (or a view of one) to Python or store it.

Fence. This relies on Numba internals (a subclass of ``types.Array`` with its own data
model; ``numba.core.datamodel``, ``numba.core.cgutils``). ``borrow`` is typed and lowered
for Numba (``type_callable``, ``lower_builtin``) so that, when a kernel calling it is
compiled, it uses

- the identity (correct, slower) when ``RAYTRACE_BORROW=0`` is set, or when the
  borrowed type cannot be registered or fails a probe (a small kernel compiled once per
  process, then cached, that borrows a NamedTuple and a tuple and checks indexing,
  ``shape``, views and ``sum``); a ``RuntimeWarning`` says so (once);
- the borrowed arrays otherwise.

``tests/test_borrow.py`` counts ``NRT_incref`` calls in the path tracer's LLVM IR, so
that borrowing silently turning into counting again fails a test. The cache folder
carries the switch (``raytrace.jit.modes``).
"""
import warnings
from typing import NamedTuple

import numpy as np
from raytrace.jit import kernel
from numba import types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, lower_builtin, type_callable

from raytrace.jit.modes import switch_on

_FORCED_IDENTITY = not switch_on("RAYTRACE_BORROW")
_REGISTER_ERROR = None   # why the borrowed type could not be set up, if it could not

try:
    from numba.core import cgutils
    from numba.core.datamodel import models, register_default

    class BorrowedArray(types.Array):
        """An array type whose values own no reference (see the module docstring)."""

        def __init__(self, dtype, ndim, layout, readonly=False, aligned=True):
            super().__init__(dtype, ndim, layout, readonly=readonly, aligned=aligned,
                             name=f"borrowed({dtype}, {ndim}d, {layout})")

        @property
        def key(self):
            return ("borrowed",) + super().key

    @register_default(BorrowedArray)
    class BorrowedArrayModel(models.StructModel):
        """ArrayModel's layout with ``meminfo`` as an untracked ``void*``."""

        def __init__(self, dmm, fe_type):
            ndim = fe_type.ndim
            members = [
                ("meminfo", types.voidptr),
                ("parent", types.pyobject),
                ("nitems", types.intp),
                ("itemsize", types.intp),
                ("data", types.CPointer(fe_type.dtype)),
                ("shape", types.UniTuple(types.intp, ndim)),
                ("strides", types.UniTuple(types.intp, ndim)),
            ]
            super().__init__(dmm, fe_type, members)
except Exception as exc:        # a Numba without these internals: borrow is the identity
    BorrowedArray = BorrowedArrayModel = None
    _REGISTER_ERROR = exc


def _borrowed_type(ty):
    if isinstance(ty, types.Array) and not isinstance(ty, BorrowedArray):
        return BorrowedArray(ty.dtype, ty.ndim, ty.layout, readonly=not ty.mutable,
                             aligned=ty.aligned)
    if isinstance(ty, types.BaseTuple):     # tuples, named or not, of any element types
        named = isinstance(ty, types.BaseNamedTuple)
        return types.BaseTuple.from_types([_borrowed_type(t) for t in ty.types],
                                          ty.instance_class if named else None)
    return ty


def _convert(context, builder, fromty, toty, value):
    if fromty == toty:
        return value
    if isinstance(toty, BorrowedArray):
        src = context.make_array(fromty)(context, builder, value)
        dst = cgutils.create_struct_proxy(toty)(context, builder)
        dst.meminfo = cgutils.get_null_value(dst.meminfo.type)
        dst.parent = src.parent
        dst.nitems = src.nitems
        dst.itemsize = src.itemsize
        dst.data = src.data
        dst.shape = src.shape
        dst.strides = src.strides
        return dst._getvalue()
    out = cgutils.get_null_value(context.get_value_type(toty))
    for i, (f, t) in enumerate(zip(fromty.types, toty.types)):
        item = builder.extract_value(value, i)
        out = builder.insert_value(out, _convert(context, builder, f, t, item), i)
    return out


@intrinsic
def _borrow(typingctx, x):
    """``x`` (array, tuple or NamedTuple of arrays) as borrowed, un-counted arrays."""
    target = _borrowed_type(x)

    def codegen(context, builder, signature, args):
        return _convert(context, builder, signature.args[0], signature.return_type, args[0])

    return target(x), codegen


# ---------------------------------------------------------------- the probe

class _ProbeArgs(NamedTuple):
    grid: np.ndarray      # (3, 4) float64
    keys: np.ndarray      # (5,) float64, sorted
    scale: float


class _ProbeSame(NamedTuple):
    first: np.ndarray     # a NamedTuple of one array type (Numba: NamedUniTuple)
    second: np.ndarray


@kernel
def _probe(args, same, pair):
    b = _borrow(args)
    s = _borrow(same)
    p = _borrow(pair)
    total = 0.0
    for i in range(b.grid.shape[0]):
        for j in range(b.grid.shape[1]):
            total += b.grid[i, j]
    view = b.grid[1:, ::2]
    return ((total * b.scale, view.sum()), (int(b.keys[b.keys.shape[0] - 2]), b.grid.shape[1]),
            s.second[1] - s.first[0], (p[0][2], p[1]))


def _probe_passes():
    grid = np.arange(12.0).reshape(3, 4)
    keys = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    got = _probe(_ProbeArgs(grid, keys, 2.0), _ProbeSame(keys, keys[::-1].copy()),
                 (np.array([5, 6, 7]), 1.5))
    want = ((2.0 * grid.sum(), grid[1:, ::2].sum()), (3, 4), 3.0, (7, 1.5))
    return tuple(got) == want


_borrow_ok = None        # None: not probed yet in this process


def _short(exc):
    """One line saying what went wrong (Numba wraps errors in "Failed in ..." headers)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(("Failed in", "During:", "File "))]
    return f"{type(exc).__name__}: {(useful or lines or [''])[0][:300]}"


def borrow_in_use():
    """Whether kernels compiled from now on in this process get borrowed arrays (else
    ``borrow`` is the identity): ``RAYTRACE_BORROW`` is not 0, the type is registered and
    the probe passed (it runs on the first call)."""
    global _borrow_ok
    if _FORCED_IDENTITY:
        return False
    if _borrow_ok is None:
        if _REGISTER_ERROR is not None:
            ok, exc = False, _REGISTER_ERROR
        else:
            try:
                ok, exc = _probe_passes(), None
            except Exception as e:      # any failure to compile or run: the identity
                ok, exc = False, e
        _borrow_ok = ok
        if not ok:
            import numba
            reason = "wrong results" if exc is None else _short(exc)
            warnings.warn(f"raytrace: borrowed arrays (raytrace/kernels/borrow.py) do not "
                          f"work with numba {numba.__version__} ({reason}); kernels count "
                          f"references again (same results, slower)", RuntimeWarning,
                          stacklevel=2)
    return _borrow_ok


def borrow(x):
    """``x`` (array, tuple or NamedTuple of arrays) as borrowed, un-counted arrays in a
    Numba kernel (see the module docstring); ``x`` itself when called from Python."""
    return x


# Typed and lowered directly (Numba's low-level extension API) rather than through an
# ``@overload``, whose implementation Numba compiles as a function of its own for every
# argument type in every process that compiles a kernel (0.4-0.5 s of each edit's compile).
@type_callable(borrow)
def _type_borrow(context):
    def typer(x):
        return _borrowed_type(x) if borrow_in_use() else x
    return typer


@lower_builtin(borrow, types.Any)
def _lower_borrow(context, builder, sig, args):
    if sig.return_type == sig.args[0]:       # the identity: a new reference, as a call returns
        return impl_ret_borrowed(context, builder, sig.return_type, args[0])
    return _convert(context, builder, sig.args[0], sig.return_type, args[0])
