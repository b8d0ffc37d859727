"""Borrowed arrays: array views that Numba does not reference-count.

Numba counts references to every array a function binds: passing a NamedTuple of 24
arrays to a helper (or inlining one, which re-binds its arguments) costs 24 atomic
increments and decrements of counters that all threads share. Per ray bounce that was
half of the path tracer's time. ``borrow(x)`` returns ``x`` (an array, or a tuple /
NamedTuple of arrays and scalars) re-typed as :class:`BorrowedArray`: the same memory
layout, but its ``meminfo`` member is typed as a plain pointer (and set to NULL), so no
reference counting is generated for it at all. Everything else (indexing, ``shape``,
views, ``np.searchsorted``...) works as for a normal array.

Rules: call it at the top of a kernel on arrays that its caller keeps alive for the
whole call; never return a borrowed array (or a view of one) to Python or store it.
"""
from numba import types
from numba.core import cgutils
from numba.core.datamodel import models, register_default
from numba.extending import intrinsic


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


def _borrowed_type(ty):
    if isinstance(ty, types.Array) and not isinstance(ty, BorrowedArray):
        return BorrowedArray(ty.dtype, ty.ndim, ty.layout, readonly=not ty.mutable, aligned=ty.aligned)
    if isinstance(ty, types.NamedTuple):
        return types.NamedTuple([_borrowed_type(t) for t in ty.types], ty.instance_class)
    if isinstance(ty, types.BaseTuple):
        return types.Tuple([_borrowed_type(t) for t in ty.types])
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
def borrow(typingctx, x):
    """``x`` (array, tuple or NamedTuple of arrays) as borrowed, un-counted arrays."""
    target = _borrowed_type(x)

    def codegen(context, builder, signature, args):
        return _convert(context, builder, signature.args[0], signature.return_type, args[0])

    return target(x), codegen
