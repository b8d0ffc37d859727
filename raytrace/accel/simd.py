"""SIMD kernels of the traversal, written directly in LLVM IR, and the node/block readers.

Numba leaves LLVM's SLP vectoriser off, so straight-line code over the 8 children of a
node or the 4 triangles of a block would stay scalar; these intrinsics emit the vector
instructions themselves (8 x float32 for boxes, 4 x float64 for triangles, fused
multiply-adds). The array arguments may be Numba arrays or raw pointers to their data
(``lowlevel.data_ptr``); the layouts are those of ``build.py``.

- ``node_mask``: slab test of all children of a node -> hit bit mask and entry distances.
- ``block_hits``: watertight ray-triangle test of a 4-triangle block -> hit bit mask, t, u, v.
- ``child_of``, ``tri_id_of``: the int32 child id / int64 triangle id stored in the spare
  row of a node record / triangle block.
"""
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from raytrace.accel.build import BLOCK, CHILD_ROW, ID_ROW, NODE_ROWS, TRI_ROWS, WIDTH

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


def _splat(builder, val, n):
    vty = ir.VectorType(val.type, n)
    undef = ir.Constant(vty, ir.Undefined)
    v = builder.insert_element(undef, val, ir.Constant(_I32, 0))
    zeros = ir.Constant(ir.VectorType(_I32, n), [0] * n)
    return builder.shuffle_vector(v, undef, zeros)


def _vload(builder, base, index, n):
    """Load ``n`` consecutive elements ``base[index : index + n]`` as a vector."""
    ptr = builder.gep(base, [index])
    vptr = builder.bitcast(ptr, ir.PointerType(ir.VectorType(base.type.pointee, n)))
    return builder.load(vptr, align=4)


def _vstore(builder, vec, base):
    vptr = builder.bitcast(base, ir.PointerType(vec.type))
    builder.store(vec, vptr, align=4)


def _vfma(builder, a, b, c):
    """a * b + c with one rounding (llvm.fma on vectors)."""
    vty = a.type
    name = f"llvm.fma.v{vty.count}f{32 if vty.element == ir.FloatType() else 64}"
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


@intrinsic
def node_mask(typingctx, box, node, nx, ny, nz, ray, dist):
    """Slab test of all W children of ``node`` at once (float32 SIMD, fused multiply-add).

    ``box``: (N, NODE_ROWS, W) float32 node records whose rows 0-5 are the child boxes
    (lo_x, hi_x, lo_y, hi_y, lo_z, hi_z);
    ``nx, ny, nz``: the near rows (0|1, 2|3, 4|5) for the ray's direction signs; ``ray``:
    pointer to 14 float32: ``1/d`` (xyz), ``-o/d`` (xyz), the same two triples for the far
    planes (pre-multiplied by a widening factor), ``tmin``, ``tmax``. A plane's distance
    is ``fma(plane, 1/d, -o/d)``. Writes the W entry distances to ``dist`` (pointer to W
    float32) and returns an int64 with bit c set when child c is hit.
    """
    f32p = types.CPointer(types.float32)
    if not (_is_base(box, types.float32, 3) and dist == f32p and ray == f32p
            and all(isinstance(a, types.Integer) for a in (node, nx, ny, nz))):
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
            return _vload(builder, data, index, W)

        def ray_at(i):
            return _splat(builder, builder.load(builder.gep(a_ray, [ir.Constant(_I64, i)])), W)

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
        _vstore(builder, t0, a_dist)
        return _mask_bits(builder, builder.fcmp_ordered("<=", t0, t1), W)

    return sig, codegen


@intrinsic
def block_hits(typingctx, tri, blk, kx, ky, kz, ray, tt, uu, vv):
    """Watertight ray-triangle test against the B triangles of block ``blk`` at once.

    Woop, Benthin and Wald (2013), "Watertight ray/triangle intersection", in float64
    SIMD: the vertices are moved to the ray origin and sheared so that the ray runs along
    +z (each vertex the same way in every triangle that shares it); the three 2D edge
    functions are evaluated with exact signs (Kahan's difference of products with fused
    multiply-adds), so triangles sharing an edge or a vertex agree on which side of it
    the ray passes and no ray slips between them. Both sides count.

    ``tri``: (nblocks, TRI_ROWS, B) float64, rows 0-8 ``v0 xyz, v1 xyz, v2 xyz``.
    ``kx, ky, kz``: the ray's axis permutation (``kz`` its dominant axis); ``ray``:
    pointer to 8 float64 ``o[kx], o[ky], o[kz], -d[kx]/d[kz], -d[ky]/d[kz], 1/d[kz], tmin,
    tmax``. Writes ``t, u, v`` per lane to ``tt, uu, vv`` (pointers to B float64; the hit
    point is ``(1-u-v) v0 + u v1 + v v2``) and returns an int64 with bit k set when lane k
    is hit with ``tmin < t < tmax``.
    """
    f64p = types.CPointer(types.float64)
    if not (_is_base(tri, types.float64, 3) and ray == tt == uu == vv == f64p
            and all(isinstance(a, types.Integer) for a in (blk, kx, ky, kz))):
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
            return [_vload(builder, data, builder.add(
                base, builder.mul(builder.add(k, ir.Constant(_I64, 3 * vertex)),
                                  ir.Constant(_I64, B))), B) for k in ks]

        ray_p = args[5]
        r = [_splat(builder, builder.load(builder.gep(ray_p, [ir.Constant(_I64, i)])), B)
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
        zero = _splat(builder, ir.Constant(ir.DoubleType(), 0.0), B)
        one = _splat(builder, ir.Constant(ir.DoubleType(), 1.0), B)
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
            _vstore(builder, vec, ptr)
        return _mask_bits(builder, ok, B)

    return sig, codegen


@intrinsic
def child_of(typingctx, nodes, node, c):
    """Child id ``c`` of ``node``: ``nodes`` (N, NODE_ROWS, W) float32 (array or pointer)
    holds it as int32 bits in row CHILD_ROW. Constant strides, no index checks."""
    if not (_is_base(nodes, types.float32, 3) and isinstance(node, types.Integer)
            and isinstance(c, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        sa = signature.args
        data = builder.bitcast(_base(context, builder, sa[0], args[0]), ir.PointerType(_I32))
        n64 = context.cast(builder, args[1], sa[1], types.int64)
        c64 = context.cast(builder, args[2], sa[2], types.int64)
        index = builder.add(builder.mul(n64, ir.Constant(_I64, NODE_ROWS * WIDTH)),
                            builder.add(c64, ir.Constant(_I64, CHILD_ROW * WIDTH)))
        return builder.load(builder.gep(data, [index]))

    return types.int32(nodes, node, c), codegen


@intrinsic
def tri_id_of(typingctx, tris, blk, k):
    """Original index of lane ``k`` of block ``blk``: ``tris`` (B, TRI_ROWS, 4) float64
    (array or pointer) holds it as int64 bits in row ID_ROW."""
    if not (_is_base(tris, types.float64, 3) and isinstance(blk, types.Integer)
            and isinstance(k, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        sa = signature.args
        data = builder.bitcast(_base(context, builder, sa[0], args[0]), ir.PointerType(_I64))
        b64 = context.cast(builder, args[1], sa[1], types.int64)
        k64 = context.cast(builder, args[2], sa[2], types.int64)
        index = builder.add(builder.mul(b64, ir.Constant(_I64, TRI_ROWS * BLOCK)),
                            builder.add(k64, ir.Constant(_I64, ID_ROW * BLOCK)))
        return builder.load(builder.gep(data, [index]))

    return types.int64(tris, blk, k), codegen
