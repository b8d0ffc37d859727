"""SIMD kernels of the traversal, written directly in LLVM IR, and the node/block readers.

Numba leaves LLVM's SLP vectoriser off, so straight-line code over the 8 children of a
node or the 4 triangles of a block would stay scalar; these intrinsics emit the vector
instructions themselves (8 x float32 for boxes; for triangles 4 x float32 vertex loads
widened to 4 x float64, where the test runs; fused multiply-adds). The array arguments
may be Numba arrays or raw pointers to their data (``lowlevel.data_ptr``); the layouts
are those of ``build.py``.

- ``node_mask``: slab test of all children of a node -> hit bit mask and entry distances.
- ``block_hits``: watertight ray-triangle test of a 4-triangle block -> hit bit mask, t, u, v.
- ``child_of``, ``tri_id_of``: the int32 child id / int32 triangle id (returned as int64)
  stored in the spare row of a node record / triangle block.

Fence. Code written in LLVM IR depends on llvmlite's IR builder and on the IR Numba
emits (typed pointers today, opaque ones announced), so each of the four has a plain-loop
twin (``_*_loops``: scalar Numba code, the same operations in the same order, the same
fused multiply-adds through ``lowlevel.fma``; bit for bit the same results). The public
names are Numba overloads that pick one when a kernel calling them is compiled:

- ``RAYTRACE_SIMD=0`` in the environment: the loops;
- otherwise the SIMD kernels, once a probe (run once per process, when the first
  kernel using them is compiled; itself cached) has run them on a few nodes and blocks
  and found them bit for bit equal to what the loops give there. The loops' results are
  stored (``simd_probe.npz``; a test checks that the loops still give them), so a cold
  start does not compile the loops too. When the probe fails to compile, crashes or
  disagrees, a ``RuntimeWarning`` says so (once) and the loops are used.

Loads and addresses name their element types (``load(..., typ=)``,
``gep(..., source_etype=)``, llvmlite >= 0.44), so they work on opaque pointers; typed
pointers (what Numba still emits) are bitcast to the loaded or stored type first, which
LLVM 15 (llvmlite 0.44) requires and later LLVMs ignore. The cache folder carries the
switch (``raytrace.jit.modes``), so kernels compiled one way are never loaded the
other way.
"""
import inspect
import pathlib
import warnings

import numpy as np
from raytrace.jit import helper, kernel
from llvmlite import ir
from numba import carray, types
from numba.extending import intrinsic, overload

from raytrace.jit.modes import switch_on
from raytrace.accel.build import BLOCK, CHILD_ROW, ID_ROW, NODE_ROWS, TRI_ROWS, WIDTH
from raytrace.accel.lowlevel import data_ptr, fma

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_F32 = ir.FloatType()
_F64 = ir.DoubleType()


def _splat(builder, val, n):
    vty = ir.VectorType(val.type, n)
    undef = ir.Constant(vty, ir.Undefined)
    v = builder.insert_element(undef, val, ir.Constant(_I32, 0))
    zeros = ir.Constant(ir.VectorType(_I32, n), [0] * n)
    return builder.shuffle_vector(v, undef, zeros)


def _typed_as(builder, ptr, pointee):
    """``ptr`` as a pointer to ``pointee``. Opaque pointers (``ptr``): itself. Typed ones
    (``float*``, what Numba's IR still uses): a bitcast when the pointee differs, as LLVM
    before 17 rejects a load, store or gep whose type does not match it."""
    if getattr(ptr.type, "is_opaque", True) or ptr.type.pointee == pointee:
        return ptr
    return builder.bitcast(ptr, ir.PointerType(pointee))


def _load_at(builder, base, index, elem, typ=None, align=None):
    """Load a ``typ`` (default ``elem``) from ``base + index`` elements of type ``elem``."""
    typ = typ or elem
    ptr = builder.gep(_typed_as(builder, base, elem), [index], source_etype=elem)
    return builder.load(_typed_as(builder, ptr, typ), typ=typ, align=align)


def _vload(builder, base, index, elem, n):
    """Load ``n`` consecutive ``elem`` values ``base[index : index + n]`` as a vector."""
    return _load_at(builder, base, index, elem, ir.VectorType(elem, n), align=4)


def _store(builder, value, ptr, align=None):
    """Store ``value`` at ``ptr`` (see ``_typed_as``)."""
    builder.store(value, _typed_as(builder, ptr, value.type), align=align)


def _vfma(builder, a, b, c):
    """a * b + c with one rounding (llvm.fma on vectors)."""
    vty = a.type
    name = f"llvm.fma.v{vty.count}f{32 if vty.element == _F32 else 64}"
    fn = builder.module.globals.get(name)
    if fn is None:
        fn = ir.Function(builder.module, ir.FunctionType(vty, [vty, vty, vty]), name=name)
    return builder.call(fn, [a, b, c])


def _vmax(builder, a, b):
    return builder.select(builder.fcmp_ordered(">", a, b), a, b)


def _vmin(builder, a, b):
    return builder.select(builder.fcmp_ordered("<", a, b), a, b)


def _is_base(ty, dtype, ndim):
    """An array of ``dtype`` (C layout, ``ndim`` dims) or a pointer to ``dtype``."""
    if isinstance(ty, types.CPointer):
        return ty.dtype == dtype
    return (isinstance(ty, types.Array) and ty.dtype == dtype and ty.ndim == ndim
            and ty.layout == "C")


def _base(context, builder, ty, val):
    """Data pointer of an array argument, or the pointer argument itself."""
    if isinstance(ty, types.CPointer):
        return val
    return context.make_array(ty)(context, builder, val).data


def _mask_bits(builder, cond, n):
    """<n x i1> -> i64 with bit k set for lane k."""
    return builder.zext(builder.bitcast(cond, ir.IntType(n)), _I64)


_F32P = types.CPointer(types.float32)
_F64P = types.CPointer(types.float64)


def _node_mask_args_ok(box, node, nx, ny, nz, ray, dist):
    return (_is_base(box, types.float32, 3) and dist == _F32P and ray == _F32P
            and all(isinstance(a, types.Integer) for a in (node, nx, ny, nz)))


def _block_hits_args_ok(tri, blk, kx, ky, kz, ray, tt, uu, vv):
    return (_is_base(tri, types.float32, 3) and ray == tt == uu == vv == _F64P
            and all(isinstance(a, types.Integer) for a in (blk, kx, ky, kz)))


def _child_of_args_ok(nodes, node, c):
    return (_is_base(nodes, types.float32, 3) and isinstance(node, types.Integer)
            and isinstance(c, types.Integer))


def _tri_id_of_args_ok(tris, blk, k):
    return (_is_base(tris, types.float32, 3) and isinstance(blk, types.Integer)
            and isinstance(k, types.Integer))


# ---------------------------------------------------------------- SIMD (LLVM IR)

@intrinsic
def _node_mask_simd(typingctx, box, node, nx, ny, nz, ray, dist):
    """``node_mask`` in 8 x float32 SIMD."""
    if not _node_mask_args_ok(box, node, nx, ny, nz, ray, dist):
        return None
    sig = types.int64(box, node, nx, ny, nz, ray, dist)

    def codegen(context, builder, signature, args):
        W = WIDTH
        a_box, a_node, a_nx, a_ny, a_nz, a_ray, a_dist = args
        sa = signature.args
        data = _base(context, builder, sa[0], a_box)
        base = builder.mul(context.cast(builder, a_node, sa[1], types.int64),
                           ir.Constant(_I64, NODE_ROWS * W))

        def row(r64):
            index = builder.add(base, builder.mul(r64, ir.Constant(_I64, W)))
            return _vload(builder, data, index, _F32, W)

        def ray_at(i):
            return _splat(builder, _load_at(builder, a_ray, ir.Constant(_I64, i), _F32), W)

        one = ir.Constant(_I64, 1)
        near_rows = [context.cast(builder, a, t, types.int64)
                     for a, t in ((a_nx, sa[2]), (a_ny, sa[3]), (a_nz, sa[4]))]
        near = [_vfma(builder, row(r), ray_at(k), ray_at(3 + k))
                for k, r in enumerate(near_rows)]
        far = [_vfma(builder, row(builder.xor(r, one)), ray_at(6 + k), ray_at(9 + k))
               for k, r in enumerate(near_rows)]
        t0 = _vmax(builder, _vmax(builder, near[0], near[1]),
                   _vmax(builder, near[2], ray_at(12)))
        t1 = _vmin(builder, _vmin(builder, far[0], far[1]), _vmin(builder, far[2], ray_at(13)))
        _store(builder, t0, a_dist, align=4)
        return _mask_bits(builder, builder.fcmp_ordered("<=", t0, t1), W)

    return sig, codegen


@intrinsic
def _block_hits_simd(typingctx, tri, blk, kx, ky, kz, ray, tt, uu, vv):
    """``block_hits`` in 4 x float64 SIMD (the float32 vertex rows widened exactly)."""
    if not _block_hits_args_ok(tri, blk, kx, ky, kz, ray, tt, uu, vv):
        return None
    sig = types.int64(tri, blk, kx, ky, kz, ray, tt, uu, vv)

    def codegen(context, builder, signature, args):
        B = BLOCK
        sa = signature.args
        data = _base(context, builder, sa[0], args[0])
        base = builder.mul(context.cast(builder, args[1], sa[1], types.int64),
                           ir.Constant(_I64, TRI_ROWS * B))
        ks = [context.cast(builder, args[i], sa[i], types.int64) for i in (2, 3, 4)]

        def rows(vertex):
            """(x, y, z) rows of one vertex of all lanes, in the ray's axis order."""
            return [builder.fpext(_vload(builder, data, builder.add(
                base, builder.mul(builder.add(k, ir.Constant(_I64, 3 * vertex)),
                                  ir.Constant(_I64, B))), _F32, B), ir.VectorType(_F64, B))
                    for k in ks]

        ray_p = args[5]
        r = [_splat(builder, _load_at(builder, ray_p, ir.Constant(_I64, i), _F64), B)
             for i in range(8)]
        okx, oky, okz, nsx, nsy, sz, tmin_, tmax_ = r
        mul = builder.fmul
        sub = builder.fsub
        add = builder.fadd
        sheared = []
        for vertex in range(3):
            px, py, pz = rows(vertex)
            pz = sub(pz, okz)
            # translate, then shear (x - Sx z, y - Sy z); z keeps its scale 1/d[kz] aside
            sheared.append((_vfma(builder, nsx, pz, sub(px, okx)),
                            _vfma(builder, nsy, pz, sub(py, oky)), pz))
        (ax, ay, az), (bx, by, bz), (cx, cy, cz) = sheared

        def diff_of_products(a, b, c, d):
            """a*b - c*d with an exact sign (Kahan's algorithm, error < 2 ulp)."""
            w = mul(c, d)
            nw = builder.fneg(w)
            err = _vfma(builder, c, d, nw)          # c*d - w, exactly
            return sub(_vfma(builder, a, b, nw), err)

        u_e = diff_of_products(cx, by, cy, bx)
        v_e = diff_of_products(ax, cy, ay, cx)
        w_e = diff_of_products(bx, ay, by, ax)
        zero = _splat(builder, ir.Constant(_F64, 0.0), B)
        one = _splat(builder, ir.Constant(_F64, 1.0), B)
        fc = builder.fcmp_ordered
        lo = _vmin(builder, u_e, _vmin(builder, v_e, w_e))
        hi = _vmax(builder, u_e, _vmax(builder, v_e, w_e))
        det = add(add(u_e, v_e), w_e)
        t_sc = _vfma(builder, u_e, az, _vfma(builder, v_e, bz, mul(w_e, cz)))
        inv = builder.fdiv(one, det)
        t = mul(t_sc, mul(sz, inv))
        ok = builder.and_(builder.or_(fc(">=", lo, zero), fc("<=", hi, zero)),
                          fc("!=", det, zero))
        ok = builder.and_(ok, builder.and_(fc(">", t, tmin_), fc("<", t, tmax_)))
        for vec, ptr in ((t, args[6]), (mul(v_e, inv), args[7]), (mul(w_e, inv), args[8])):
            _store(builder, vec, ptr, align=4)
        return _mask_bits(builder, ok, B)

    return sig, codegen


def _id_reader(name, elem_np, elem_ir, result, rows, row, lanes):
    """An intrinsic reading the id stored as ``elem_ir`` integer bits in row ``row`` of
    record ``i`` (``rows`` x ``lanes`` elements of ``elem_np``), lane ``k``."""

    @intrinsic
    def read(typingctx, arr, i, k):
        if not (_is_base(arr, elem_np, 3) and isinstance(i, types.Integer)
                and isinstance(k, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            sa = signature.args
            data = _base(context, builder, sa[0], args[0])
            i64 = context.cast(builder, args[1], sa[1], types.int64)
            k64 = context.cast(builder, args[2], sa[2], types.int64)
            index = builder.add(builder.mul(i64, ir.Constant(_I64, rows * lanes)),
                                builder.add(k64, ir.Constant(_I64, row * lanes)))
            # same element size: the address of element ``index`` read as an integer
            value = _load_at(builder, data, index, elem_ir)
            if result.bitwidth > elem_ir.width:
                value = builder.sext(value, ir.IntType(result.bitwidth))
            return value

        return result(arr, i, k), codegen

    read.__name__ = name
    return read


_child_of_simd = _id_reader("_child_of_simd", types.float32, _I32, types.int32,
                            NODE_ROWS, CHILD_ROW, WIDTH)
_tri_id_of_simd = _id_reader("_tri_id_of_simd", types.float32, _I32, types.int64,
                             TRI_ROWS, ID_ROW, BLOCK)


# ---------------------------------------------------------------- plain loops

_HUGE = 1 << 40     # length of the 1-D view of a raw pointer (never checked)


def _flat(x):
    """1-D view of an array or raw pointer argument (Numba only)."""
    raise TypeError("_flat is for Numba kernels")


@overload(_flat, inline="always")
def _flat_impl(x):
    if isinstance(x, types.CPointer):
        return lambda x: carray(x, (_HUGE,))
    if isinstance(x, types.Array) and x.layout == "C":
        return lambda x: x.reshape(x.size)
    return None


@helper
def _fmax(a, b):
    """``a if a > b else b`` (the SIMD ``select``: NaN in ``a`` gives ``b``)."""
    return a if a > b else b


@helper
def _fmin(a, b):
    return a if a < b else b


@kernel(error_model="numpy")
def _node_mask_loops(box, node, nx, ny, nz, ray, dist):
    """``node_mask`` child by child."""
    b = _flat(box)
    base = np.int64(node) * (NODE_ROWS * WIDTH)
    rx = base + np.int64(nx) * WIDTH
    ry = base + np.int64(ny) * WIDTH
    rz = base + np.int64(nz) * WIDTH
    qx = base + (np.int64(nx) ^ 1) * WIDTH
    qy = base + (np.int64(ny) ^ 1) * WIDTH
    qz = base + (np.int64(nz) ^ 1) * WIDTH
    mask = np.int64(0)
    for c in range(WIDTH):
        t0 = _fmax(_fmax(fma(b[rx + c], ray[0], ray[3]), fma(b[ry + c], ray[1], ray[4])),
                   _fmax(fma(b[rz + c], ray[2], ray[5]), ray[12]))
        t1 = _fmin(_fmin(fma(b[qx + c], ray[6], ray[9]), fma(b[qy + c], ray[7], ray[10])),
                   _fmin(fma(b[qz + c], ray[8], ray[11]), ray[13]))
        dist[c] = t0
        if t0 <= t1:
            mask |= np.int64(1) << c
    return mask


@helper
def _diff_of_products(a, b, c, d):
    """a*b - c*d with an exact sign (Kahan's algorithm), as in the SIMD kernel."""
    w = c * d
    nw = -w
    err = fma(c, d, nw)
    return fma(a, b, nw) - err


@kernel(error_model="numpy")
def _block_hits_loops(tri, blk, kx, ky, kz, ray, tt, uu, vv):
    """``block_hits`` lane by lane."""
    t = _flat(tri)
    base = np.int64(blk) * (TRI_ROWS * BLOCK)
    okx, oky, okz = ray[0], ray[1], ray[2]
    nsx, nsy, sz = ray[3], ray[4], ray[5]
    tmin, tmax = ray[6], ray[7]
    ix = base + np.int64(kx) * BLOCK
    iy = base + np.int64(ky) * BLOCK
    iz = base + np.int64(kz) * BLOCK
    mask = np.int64(0)
    for k in range(BLOCK):
        # vertex v at rows 3 v + axis; translate, then shear
        az = t[iz + k] - okz
        ax = fma(nsx, az, t[ix + k] - okx)
        ay = fma(nsy, az, t[iy + k] - oky)
        bz = t[iz + 3 * BLOCK + k] - okz
        bx = fma(nsx, bz, t[ix + 3 * BLOCK + k] - okx)
        by = fma(nsy, bz, t[iy + 3 * BLOCK + k] - oky)
        cz = t[iz + 6 * BLOCK + k] - okz
        cx = fma(nsx, cz, t[ix + 6 * BLOCK + k] - okx)
        cy = fma(nsy, cz, t[iy + 6 * BLOCK + k] - oky)
        u_e = _diff_of_products(cx, by, cy, bx)
        v_e = _diff_of_products(ax, cy, ay, cx)
        w_e = _diff_of_products(bx, ay, by, ax)
        lo = _fmin(u_e, _fmin(v_e, w_e))
        hi = _fmax(u_e, _fmax(v_e, w_e))
        det = (u_e + v_e) + w_e
        t_sc = fma(u_e, az, fma(v_e, bz, w_e * cz))
        inv = 1.0 / det
        tk = t_sc * (sz * inv)
        tt[k] = tk
        uu[k] = v_e * inv
        vv[k] = w_e * inv
        if ((lo >= 0.0 or hi <= 0.0) and (det < 0.0 or det > 0.0)
                and tk > tmin and tk < tmax):
            mask |= np.int64(1) << k
    return mask


@kernel
def _child_of_loops(nodes, node, c):
    return _flat(nodes).view(np.int32)[np.int64(node) * (NODE_ROWS * WIDTH)
                                       + CHILD_ROW * WIDTH + np.int64(c)]


@kernel
def _tri_id_of_loops(tris, blk, k):
    return np.int64(_flat(tris).view(np.int32)[np.int64(blk) * (TRI_ROWS * BLOCK)
                                               + ID_ROW * BLOCK + np.int64(k)])


# ---------------------------------------------------------------- the choice

_FORCED_LOOPS = not switch_on("RAYTRACE_SIMD")
_simd_ok = None          # None: not probed yet in this process


def _probe_inputs():
    """A node, a block and rays (``node_mask`` / ``block_hits`` constants) to compare
    the SIMD kernels with the loops on: hits, misses, an empty slot, a point-sized box,
    axis-parallel rays, a zero-size triangle, an unused lane, NaN bit patterns as ids."""
    rng = np.random.default_rng(7)
    box = np.zeros((2, NODE_ROWS, WIDTH), np.float32)
    lo = rng.uniform(-1, 0.2, (3, WIDTH))
    hi = lo + rng.uniform(0.4, 1.5, (3, WIDTH))
    hi[:, 1] = lo[:, 1]                         # a point-sized box
    box[1, 0:6:2], box[1, 1:6:2] = lo, hi
    box[1, 0:6:2, 7], box[1, 1:6:2, 7] = np.inf, -np.inf     # an empty slot
    box.view(np.int32)[1, CHILD_ROW] = [3, -1, -8388607, 2139095041, 0, 7, -2, 12345]
    tri = np.zeros((2, TRI_ROWS, BLOCK), np.float32)
    tri[1, :9] = rng.uniform(-1, 1, (9, BLOCK))
    tri[1, :9, 2] = np.tile(tri[1, 0:3, 2], 3)                # a zero-size triangle
    tri[1, :9, 3] = 0.0                                       # an unused lane
    tri[1, 0:3, 1] = tri[1, 0:3, 0]                           # two triangles share v0
    tri.view(np.int32)[1, ID_ROW] = [5, -1, 2 ** 30 + 1, -(2 ** 22) - 3]
    dirs = [(0.3, -0.2, 0.9), (1.0, 0.0, 0.0), (0.0, 0.0, -1.0), (-0.5, 0.5, 0.1)]
    rays32 = np.zeros((len(dirs), 14), np.float32)
    rays64 = np.zeros((len(dirs), 8))
    axes = np.zeros((len(dirs), 3), np.int64)
    nears = np.zeros((len(dirs), 3), np.int64)
    for i, d in enumerate(dirs):
        o = np.array([0.2, 0.3, 0.1]) - 3.0 * np.asarray(d)
        inv = np.array([1 / x if x != 0 else 1e30 for x in d])
        rays32[i, 0:3] = inv
        rays32[i, 3:6] = -o * inv
        rays32[i, 6:9] = inv * (1 + 2 ** -19)
        rays32[i, 9:12] = -o * inv * (1 + 2 ** -19)
        rays32[i, 12:14] = 0.0, np.inf
        nears[i] = [2 * a + (inv[a] < 0) for a in range(3)]
        kz = int(np.argmax(np.abs(d)))
        kx, ky = (kz + 1) % 3, (kz + 2) % 3
        axes[i] = kx, ky, kz
        rays64[i] = [o[kx], o[ky], o[kz], -d[kx] / d[kz], -d[ky] / d[kz], 1 / d[kz], 0.0, 1e9]
    return box, tri, rays32, rays64, nears, axes


def _probe_kernel(use_simd):
    """The probe run through the SIMD kernels (``use_simd``) or through the loops: one
    compiled function each, so a process that only checks the SIMD kernels does not
    compile the loops."""

    @kernel
    def probe(box, tri, rays32, rays64, nears, axes, masks, dist, hits, tuv, ids):
        """Each probe ray twice through the node (its near rows, then the far ones) and
        once through the block; every child id and triangle id."""
        for i in range(rays32.shape[0]):
            r32 = data_ptr(rays32[i])
            r64 = data_ptr(rays64[i])
            kx, ky, kz = axes[i, 0], axes[i, 1], axes[i, 2]
            t, u, v = data_ptr(tuv[i, 0]), data_ptr(tuv[i, 1]), data_ptr(tuv[i, 2])
            for j in range(2):
                d = data_ptr(dist[i, j])
                nx, ny, nz = nears[i, 0] ^ j, nears[i, 1] ^ j, nears[i, 2] ^ j
                if use_simd:
                    masks[i, j] = _node_mask_simd(box, 1, nx, ny, nz, r32, d)
                else:
                    masks[i, j] = _node_mask_loops(box, 1, nx, ny, nz, r32, d)
            if use_simd:
                hits[i] = _block_hits_simd(tri, 1, kx, ky, kz, r64, t, u, v)
            else:
                hits[i] = _block_hits_loops(tri, 1, kx, ky, kz, r64, t, u, v)
        for c in range(WIDTH):
            ids[c] = _child_of_simd(box, 1, c) if use_simd else _child_of_loops(box, 1, c)
        for k in range(BLOCK):
            ids[WIDTH + k] = _tri_id_of_simd(tri, 1, k) if use_simd else _tri_id_of_loops(tri, 1, k)
    return probe


_probe_simd = _probe_kernel(True)
_probe_loops = _probe_kernel(False)
PROBE_NAMES = ("masks", "dist", "hits", "tuv", "ids")
# what the loops give on the probe inputs (tests/test_simd.py checks that they still do;
# python -c "from raytrace.accel.simd import write_probe_expected as w; w()" rewrites it)
PROBE_EXPECTED = pathlib.Path(__file__).with_name("simd_probe.npz")


def _probe_results(use_simd):
    box, tri, rays32, rays64, nears, axes = _probe_inputs()
    n = rays32.shape[0]
    out = (np.zeros((n, 2), np.int64), np.zeros((n, 2, WIDTH), np.float32),
           np.zeros(n, np.int64), np.zeros((n, 3, BLOCK)), np.zeros(WIDTH + BLOCK, np.int64))
    (_probe_simd if use_simd else _probe_loops)(box, tri, rays32, rays64, nears, axes, *out)
    return out


def probe_expected():
    """The loops' results on the probe inputs, as stored in ``simd_probe.npz``."""
    with np.load(PROBE_EXPECTED) as f:
        return tuple(f[k] for k in PROBE_NAMES)


def write_probe_expected():
    """Store the loops' results on the probe inputs (after a deliberate change of the
    loops or of the probe inputs)."""
    np.savez(PROBE_EXPECTED, **dict(zip(PROBE_NAMES, _probe_results(False))))


def same_bits(a, b):
    """Whether two arrays hold the same values bit for bit (any NaN matches any NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind != "f":
        return bool(np.array_equal(a, b))
    ints = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
    nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(nan | (a.view(ints) == b.view(ints))))


def _short(exc):
    """One line saying what went wrong (Numba wraps errors in "Failed in ..." headers)."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(("Failed in", "During:", "File "))]
    return f"{type(exc).__name__}: {(useful or lines or [''])[0][:300]}"


def simd_in_use():
    """Whether kernels compiled from now on in this process get the SIMD versions:
    ``RAYTRACE_SIMD`` is not 0 and the probe passed (it runs on the first call)."""
    global _simd_ok
    if _FORCED_LOOPS:
        return False
    if _simd_ok is None:
        try:
            agree = all(same_bits(a, b) for a, b in zip(_probe_results(True), probe_expected()))
            reason = "its results differ from the plain loops'"
        except Exception as exc:             # any failure to compile or run: use the loops
            agree = False
            reason = _short(exc)
        _simd_ok = agree
        if not agree:
            import llvmlite
            import numba
            warnings.warn(
                f"raytrace: the SIMD BVH kernels (raytrace/accel/simd.py) do not work with "
                f"numba {numba.__version__} / llvmlite {llvmlite.__version__} ({reason}); "
                f"using plain loops (same results, slower)", RuntimeWarning, stacklevel=2)
    return _simd_ok


# ---------------------------------------------------------------- public names


def node_mask(box, node, nx, ny, nz, ray, dist):
    """Slab test of all W children of ``node`` at once (float32, fused multiply-add).

    ``box``: (N, NODE_ROWS, W) float32 node records whose rows 0-5 are the child boxes
    (lo_x, hi_x, lo_y, hi_y, lo_z, hi_z);
    ``nx, ny, nz``: the near rows (0|1, 2|3, 4|5) for the ray's direction signs; ``ray``:
    pointer to 14 float32: ``1/d`` (xyz), ``-o/d`` (xyz), the same two triples for the far
    planes (pre-multiplied by a widening factor), ``tmin``, ``tmax``. A plane's distance
    is ``fma(plane, 1/d, -o/d)``; the entry distance is ``max(near x, near y, near z,
    tmin)``, the exit ``min(far x, far y, far z, tmax)`` (a NaN loses each ``max``/``min``
    unless it is the right operand). Writes the W entry distances to ``dist`` (pointer to
    W float32) and returns an int64 with bit c set when child c is hit (entry <= exit).
    Numba kernels only.
    """
    raise TypeError("node_mask is called from Numba kernels only")


def block_hits(tri, blk, kx, ky, kz, ray, tt, uu, vv):
    """Watertight ray-triangle test against the B triangles of block ``blk`` at once.

    Woop, Benthin and Wald (2013), "Watertight ray/triangle intersection", in float64:
    the vertices are moved to the ray origin and sheared so that the ray runs along
    +z (each vertex the same way in every triangle that shares it); the three 2D edge
    functions are evaluated with exact signs (Kahan's difference of products with fused
    multiply-adds), so triangles sharing an edge or a vertex agree on which side of it
    the ray passes and no ray slips between them. Both sides count.

    ``tri``: (nblocks, TRI_ROWS, B) float32, rows 0-8 ``v0 xyz, v1 xyz, v2 xyz``, widened
    exactly to float64 for the test.
    ``kx, ky, kz``: the ray's axis permutation (``kz`` its dominant axis); ``ray``:
    pointer to 8 float64 ``o[kx], o[ky], o[kz], -d[kx]/d[kz], -d[ky]/d[kz], 1/d[kz], tmin,
    tmax``. Writes ``t, u, v`` per lane to ``tt, uu, vv`` (pointers to B float64; the hit
    point is ``(1-u-v) v0 + u v1 + v v2``) and returns an int64 with bit k set when lane k
    is hit with ``tmin < t < tmax``. Numba kernels only.
    """
    raise TypeError("block_hits is called from Numba kernels only")


def child_of(nodes, node, c):
    """Child id ``c`` of ``node``: ``nodes`` (N, NODE_ROWS, W) float32 (array or pointer)
    holds it as int32 bits in row CHILD_ROW. Constant strides, no index checks. Numba
    kernels only."""
    raise TypeError("child_of is called from Numba kernels only")


def tri_id_of(tris, blk, k):
    """Original index (int64) of lane ``k`` of block ``blk``: ``tris`` (B, TRI_ROWS, 4)
    float32 (array or pointer) holds it as int32 bits in row ID_ROW. Numba kernels only."""
    raise TypeError("tri_id_of is called from Numba kernels only")


def _simd_or_loops(api, simd, loops, args_ok):
    """Declare the Numba overload of ``api`` (inlined into its caller) for the argument
    types that ``args_ok`` accepts: the intrinsic ``simd`` where the SIMD probe passed
    (:func:`simd_in_use`), else the plain ``loops``. The implementation is a lambda with
    ``api``'s parameter names, which Numba checks against the typing function's (shown
    with them too); an inlined overload does not lower ``*args``."""
    signature = inspect.signature(api)
    names = ", ".join(signature.parameters)

    def typing(*args):
        if not args_ok(*args):
            return None
        chosen = simd if simd_in_use() else loops
        return eval(f"lambda {names}: chosen({names})", {"chosen": chosen, "__name__": __name__})  # noqa: S307
    typing.__signature__ = signature
    overload(api, inline="always")(typing)


_simd_or_loops(node_mask, _node_mask_simd, _node_mask_loops, _node_mask_args_ok)
_simd_or_loops(block_hits, _block_hits_simd, _block_hits_loops, _block_hits_args_ok)
_simd_or_loops(child_of, _child_of_simd, _child_of_loops, _child_of_args_ok)
_simd_or_loops(tri_id_of, _tri_id_of_simd, _tri_id_of_loops, _tri_id_of_args_ok)



