"""Low-level helpers for Numba kernels: stack scratch memory, raw pointers, bit tricks.

- ``alloca_i32(n)``, ``alloca_f32(n)``, ``alloca_f64(n)``: pointer to ``n`` (an integer
  literal) uninitialised elements in the calling function's stack frame, valid until it
  returns. ``np.empty`` in a kernel is a heap allocation (tens of nanoseconds); a
  traversal that runs once per ray cannot afford it. Index the pointer (``p[i]``) or view
  it with ``numba.carray(p, n)``.
- ``data_ptr(arr)``: the data pointer of a C-contiguous array. Passing raw pointers to a
  function called once per ray avoids copying whole array structs on every call and the
  atomic reference-count updates Numba wraps around array variables (a cache line that
  all threads write). The array must outlive every use of the pointer.
- ``offset(ptr, n)``: ``ptr + n`` elements.
- ``ctz(x)``: count of trailing zero bits of a nonzero integer (LLVM ``cttz``).
- ``fma(a, b, c)``: ``a * b + c`` rounded once (LLVM ``llvm.fma``), float32 or float64.
- ``fetch_add(counter, n)``: atomically add ``n`` to ``counter[0]`` (int64) and return the
  value before (LLVM ``atomicrmw add``): a counter several threads draw from.
- ``prefetch(ptr, n)``: ask the CPU to bring the cache line holding ``ptr + n`` elements
  into its caches (LLVM ``llvm.prefetch``: a read, all cache levels). A hint only: no
  effect on any result, no fault on any address. Where the intrinsic cannot be emitted
  it emits nothing (``prefetch_emitted`` says which, ``tests/test_simd.py`` checks it).

These are Numba intrinsics (LLVM IR emitted through llvmlite), so they depend on the
Numba/llvmlite versions (see ``tests/test_simd.py``). Addresses are computed with
an explicit element type (``gep(..., source_etype=...)``), which works whether llvmlite
hands out typed or opaque pointers.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


def _alloca_intrinsic(nbtype):
    @intrinsic
    def _alloca(typingctx, n):
        if not isinstance(n, types.IntegerLiteral):
            return None
        size = n.literal_value

        def codegen(context, builder, signature, args):
            ty = context.get_data_type(nbtype)
            return cgutils.alloca_once(builder, ty, size=context.get_constant(types.intp, size))

        return types.CPointer(nbtype)(n), codegen

    return _alloca


alloca_i32 = _alloca_intrinsic(types.int32)
alloca_i32.__doc__ = "Pointer to ``n`` int32 in the caller's stack frame (``n`` literal)."
alloca_f32 = _alloca_intrinsic(types.float32)
alloca_f32.__doc__ = "Pointer to ``n`` float32 in the caller's stack frame (``n`` literal)."
alloca_f64 = _alloca_intrinsic(types.float64)
alloca_f64.__doc__ = "Pointer to ``n`` float64 in the caller's stack frame (``n`` literal)."


@intrinsic
def ctz(typingctx, x):
    """Number of trailing zero bits of a nonzero integer ``x`` (LLVM ``cttz``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], cgutils.true_bit)

    return x(x), codegen


@intrinsic
def data_ptr(typingctx, arr):
    """Pointer to the first element of a C-contiguous array (no reference kept)."""
    if not (isinstance(arr, types.Array) and arr.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        return context.make_array(arr)(context, builder, args[0]).data

    return types.CPointer(arr.dtype)(arr), codegen


@intrinsic
def offset(typingctx, ptr, n):
    """``ptr + n`` elements."""
    if not (isinstance(ptr, types.CPointer) and isinstance(n, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        index = context.cast(builder, args[1], signature.args[1], types.int64)
        return builder.gep(args[0], [index], source_etype=context.get_data_type(ptr.dtype))

    return ptr(ptr, n), codegen


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` with one rounding (IEEE fused multiply-add, LLVM ``llvm.fma``);
    ``a, b, c`` all float32 or all float64. Exact whatever the CPU: without an FMA
    instruction LLVM calls the C library's correctly rounded ``fma``."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return a(a, b, c), codegen


@intrinsic
def fetch_add(typingctx, counter, n):
    """Add ``n`` to ``counter[0]`` (a C-contiguous int64 array) atomically; returns the
    value it had before. Threads that share the counter each get distinct values."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64
            and counter.layout == "C" and isinstance(n, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        ptr = context.make_array(counter)(context, builder, args[0]).data
        value = context.cast(builder, args[1], signature.args[1], types.int64)
        return builder.atomic_rmw("add", ptr, value, "monotonic")

    return types.int64(counter, n), codegen


_prefetch_ok = True     # False once emitting llvm.prefetch failed in this process


@intrinsic
def prefetch(typingctx, ptr, n):
    """Prefetch the cache line of ``ptr + n`` elements for reading into every cache level
    (x86: ``prefetcht0``). Returns None; a no-op where the intrinsic cannot be emitted."""
    if not (isinstance(ptr, types.CPointer) and isinstance(n, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        global _prefetch_ok
        try:
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            index = context.cast(builder, args[1], signature.args[1], types.int64)
            addr = builder.gep(args[0], [index], source_etype=context.get_data_type(ptr.dtype))
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
            fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], fnty)
            # read (0), highest temporal locality (3), data cache (1)
            builder.call(fn, [builder.bitcast(addr, i8p), ir.Constant(i32, 0),
                              ir.Constant(i32, 3), ir.Constant(i32, 1)])
        except Exception:       # llvmlite changed how intrinsics are declared: skip the hint
            _prefetch_ok = False
        return context.get_dummy_value()

    return types.none(ptr, n), codegen


def prefetch_emitted():
    """False when a kernel compiled in this process could not emit ``prefetch`` (then
    the hint is left out: same results, possibly slower)."""
    return _prefetch_ok
