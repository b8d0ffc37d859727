"""BSDFs of the path tracer (Numba, scalar, no allocation).

Everything works in a local shading frame: the shading normal is +z and the direction
towards the previous path vertex (the camera side), ``wi``, has ``wi.z > 0`` (the
integrator flips the frame to the side the ray arrives from). ``wo`` points to where the
light comes from. Conventions as in Mitsuba 3:

- ``bsdf_eval`` returns ``f(wi, wo) * |cos theta_o|`` per channel and the solid-angle
  pdf of ``bsdf_sample`` producing ``wo`` (delta lobes contribute nothing to either);
- ``bsdf_sample`` returns ``wo``, the sample weight ``f |cos theta_o| / pdf`` (for a
  delta lobe: its discrete weight / its selection probability), the pdf, whether the
  lobe was a delta, and the relative index of refraction crossed (1 for reflection);
- ``eta`` (argument) is the relative index ``n_t / n_i`` of the interface for the side
  ``wi`` is on: ``ior`` when the ray arrives from outside, ``1 / ior`` from inside.

Materials (``M_TYPE``; colour ``c`` = the material's base colour after texturing):

- diffuse: ``f = c / pi``, cosine-weighted sampling.
- conductor: perfect mirror times ``c`` (Mitsuba ``conductor`` with ``material: none``).
- rough_conductor: GGX microfacets, ``f = F(wi.h) D(h) G1(wi) G1(wo) / (4 cos_i cos_o)``
  with Schlick's ``F = c + (1 - c)(1 - wi.h)^5``, separable Smith masking, sampled from
  the distribution of visible normals (Heitz 2018), weight ``F G1(wo)``.
- dielectric: smooth interface, exact unpolarised Fresnel ``F``; reflection is chosen
  with probability ``F`` (weight 1), refraction with ``1 - F`` (weight ``1 / eta^2``:
  radiance is compressed into the smaller solid angle); total internal reflection sends
  everything to the mirror direction.
- phong (course material) in the path tracer: Lambert ``k_d`` plus a mirror lobe of
  colour ``reflect`` and, when ``transmit`` > 0, a refraction lobe; with ``transmit`` the
  mirror lobe is weighted by the exact Fresnel ``F`` and the refraction by ``(1 - F)
  transmit``. Lobes are chosen in proportion to their mean colour. The highlight term
  ``k_s (R.L)^s`` has no counterpart (the mirror lobe replaces it). Not normalised: a
  course material whose ``k_d + reflect`` exceeds 1 reflects more than it receives,
  exactly as it does in the Whitted integrator.
"""
import math

from raytrace.jit import helper, kernel

from ..layout import (M_ALPHA, M_REFLECT, M_TRANSMIT, M_TYPE, MAT_CONDUCTOR, MAT_DIELECTRIC,
                      MAT_DIFFUSE, MAT_PHONG, MAT_ROUGH_CONDUCTOR)
from .records import BSDFSample
from .trig import cos_sin_2pi

INV_PI = 1.0 / math.pi
TINY = 1e-12          # cosines below this count as grazing: nothing is scattered


@kernel
def fresnel_dielectric(cos_i, eta):
    """Unpolarised Fresnel reflectance at a smooth interface, light arriving at ``cos_i``
    (>= 0) on the side of index ``n_i``, ``eta = n_t / n_i``. -> (F, cos_t); total
    internal reflection gives (1, 0)."""
    sin2_t = (1.0 - cos_i * cos_i) / (eta * eta)
    if sin2_t >= 1.0:
        return 1.0, 0.0
    cos_t = math.sqrt(1.0 - sin2_t)
    rs = (cos_i - eta * cos_t) / (cos_i + eta * cos_t)
    rp = (eta * cos_i - cos_t) / (eta * cos_i + cos_t)
    return 0.5 * (rs * rs + rp * rp), cos_t


@helper
def schlick(f0, cos):
    c = 1.0 - cos
    c2 = c * c
    return f0 + (1.0 - f0) * (c2 * c2 * c)


@kernel
def ggx_d(alpha, mx, my, mz):
    """GGX (Trowbridge-Reitz) normal distribution, isotropic; 0 below the surface."""
    if mz <= 0.0:
        return 0.0
    a2 = alpha * alpha
    t = (mx * mx + my * my) / a2 + mz * mz
    return 1.0 / (math.pi * a2 * t * t)


@kernel
def ggx_g1(alpha, wx, wy, wz, w_dot_m):
    """Smith masking of direction w for microfacet normal m (0 when w is below either)."""
    if wz <= 0.0 or w_dot_m <= 0.0:
        return 0.0
    tan2 = (wx * wx + wy * wy) / (wz * wz)
    return 2.0 / (1.0 + math.sqrt(1.0 + alpha * alpha * tan2))


@kernel
def ggx_sample_visible(alpha, wix, wiy, wiz, u1, u2):
    """A microfacet normal drawn from the GGX distribution of normals visible from wi
    (Heitz 2018, "Sampling the GGX distribution of visible normals")."""
    vx, vy, vz = alpha * wix, alpha * wiy, wiz
    ln = math.sqrt(vx * vx + vy * vy + vz * vz)
    vx, vy, vz = vx / ln, vy / ln, vz / ln
    lensq = vx * vx + vy * vy
    if lensq > 0.0:
        inv = 1.0 / math.sqrt(lensq)
        t1x, t1y, t1z = -vy * inv, vx * inv, 0.0
    else:
        t1x, t1y, t1z = 1.0, 0.0, 0.0
    t2x = vy * t1z - vz * t1y
    t2y = vz * t1x - vx * t1z
    t2z = vx * t1y - vy * t1x
    r = math.sqrt(u1)
    cos_phi, sin_phi = cos_sin_2pi(u2)
    p1 = r * cos_phi
    p2 = r * sin_phi
    s = 0.5 * (1.0 + vz)
    p2 = (1.0 - s) * math.sqrt(max(0.0, 1.0 - p1 * p1)) + s * p2
    p3 = math.sqrt(max(0.0, 1.0 - p1 * p1 - p2 * p2))
    nx = p1 * t1x + p2 * t2x + p3 * vx
    ny = p1 * t1y + p2 * t2y + p3 * vy
    nz = p1 * t1z + p2 * t2z + p3 * vz
    mx, my, mz = alpha * nx, alpha * ny, max(0.0, nz)
    ln = math.sqrt(mx * mx + my * my + mz * mz)
    if ln == 0.0:
        return 0.0, 0.0, 1.0
    return mx / ln, my / ln, mz / ln


@kernel
def _phong_lobes(mats, m, cr, cg, cb, eta, cos_i):
    """-> (selection probabilities (3) of the diffuse, mirror and refraction lobes, the
    Fresnel factor of the mirror lobe, cos_t (0 when there is no refraction lobe))."""
    rr, rg, rb = mats[m, M_REFLECT], mats[m, M_REFLECT + 1], mats[m, M_REFLECT + 2]
    tr, tg, tb = mats[m, M_TRANSMIT], mats[m, M_TRANSMIT + 1], mats[m, M_TRANSMIT + 2]
    wt = (tr + tg + tb) / 3.0
    f, cos_t = 1.0, 0.0
    if wt > 0.0:
        f, cos_t = fresnel_dielectric(cos_i, eta)
    wd = (cr + cg + cb) / 3.0
    wr = (rr + rg + rb) / 3.0 * f
    wt = wt * (1.0 - f)
    total = wd + wr + wt
    if total <= 0.0:
        return (0.0, 0.0, 0.0), f, cos_t
    return (wd / total, wr / total, wt / total), f, cos_t


@kernel
def bsdf_has_smooth(mats, m, cr, cg, cb):
    """True when the BSDF has a non-delta part (next-event estimation can help)."""
    kind = int(mats[m, M_TYPE])
    if kind == MAT_DIFFUSE or kind == MAT_ROUGH_CONDUCTOR:
        return True
    if kind == MAT_PHONG:
        return cr + cg + cb > 0.0
    return False


@kernel
def bsdf_chooses_lobe(mats, m):
    """True when ``bsdf_sample`` reads ``u0`` (it chooses among lobes: phong, dielectric)."""
    kind = int(mats[m, M_TYPE])
    return kind == MAT_PHONG or kind == MAT_DIELECTRIC


@kernel
def bsdf_eval(mats, m, cr, cg, cb, eta, wix, wiy, wiz, wox, woy, woz):
    """-> (f cos_o (r, g, b), pdf) for wi -> wo in the local frame (see module docs)."""
    kind = int(mats[m, M_TYPE])
    if wiz <= TINY or woz <= TINY:
        return 0.0, 0.0, 0.0, 0.0
    if kind == MAT_DIFFUSE:
        c = woz * INV_PI
        return cr * c, cg * c, cb * c, c
    if kind == MAT_PHONG:
        (pd, pr, pt), f, cos_t = _phong_lobes(mats, m, cr, cg, cb, eta, wiz)
        c = woz * INV_PI
        return cr * c, cg * c, cb * c, pd * c
    if kind == MAT_ROUGH_CONDUCTOR:
        alpha = mats[m, M_ALPHA]
        hx, hy, hz = wix + wox, wiy + woy, wiz + woz
        ln = math.sqrt(hx * hx + hy * hy + hz * hz)
        hx, hy, hz = hx / ln, hy / ln, hz / ln
        i_dot_h = wix * hx + wiy * hy + wiz * hz
        d = ggx_d(alpha, hx, hy, hz)
        g1i = ggx_g1(alpha, wix, wiy, wiz, i_dot_h)
        g1o = ggx_g1(alpha, wox, woy, woz, i_dot_h)     # o.h == i.h for a reflection
        if d == 0.0 or g1i == 0.0:
            return 0.0, 0.0, 0.0, 0.0
        base = d * g1i / (4.0 * wiz)
        fc = base * g1o
        return (schlick(cr, i_dot_h) * fc, schlick(cg, i_dot_h) * fc, schlick(cb, i_dot_h) * fc, base)
    return 0.0, 0.0, 0.0, 0.0            # conductor, dielectric: delta only


@helper
def _no_sample():
    """The BSDFSample of a failed sample (weight 0: the path ends)."""
    return BSDFSample(False, (0.0, 0.0, 1.0), (0.0, 0.0, 0.0), 0.0, False, 1.0, 1.0)


@helper
def _sampled(wo, weight, pdf, delta, eta):
    """The BSDFSample of local direction ``wo`` (its side: wo's z)."""
    return BSDFSample(True, wo, weight, pdf, delta, eta, wo[2])


@kernel
def bsdf_sample(mats, m, cr, cg, cb, eta, wix, wiy, wiz, u0, u1, u2):
    """Sample wo -> :class:`~raytrace.kernels.records.BSDFSample` in the local frame
    (``wo`` local, ``side`` its z: > 0 on the shading normal's side).

    A failed sample has weight 0 (the path ends). ``u0`` chooses the lobe, ``u1, u2`` the
    direction within it."""
    kind = int(mats[m, M_TYPE])
    if wiz <= TINY:
        return _no_sample()
    if kind == MAT_DIFFUSE or kind == MAT_PHONG:
        pd = 1.0
        if kind == MAT_PHONG:
            (pd, pr, pt), f, cos_t = _phong_lobes(mats, m, cr, cg, cb, eta, wiz)
            if u0 >= pd:
                if u0 < pd + pr:           # mirror
                    s = f / pr
                    reflect = (mats[m, M_REFLECT] * s, mats[m, M_REFLECT + 1] * s, mats[m, M_REFLECT + 2] * s)
                    return _sampled((-wix, -wiy, wiz), reflect, pr, True, 1.0)
                if pt > 0.0:               # refraction
                    s = (1.0 - f) / (pt * eta * eta)
                    transmit = (mats[m, M_TRANSMIT] * s, mats[m, M_TRANSMIT + 1] * s, mats[m, M_TRANSMIT + 2] * s)
                    return _sampled((-wix / eta, -wiy / eta, -cos_t), transmit, pt, True, eta)
                return _no_sample()
        if pd <= 0.0:
            return _no_sample()
        r = math.sqrt(u1)
        cos_phi, sin_phi = cos_sin_2pi(u2)
        wox, woy = r * cos_phi, r * sin_phi
        woz = math.sqrt(max(0.0, 1.0 - u1))
        if woz <= TINY:
            return _no_sample()
        return _sampled((wox, woy, woz), (cr / pd, cg / pd, cb / pd), pd * woz * INV_PI, False, 1.0)
    if kind == MAT_CONDUCTOR:
        return _sampled((-wix, -wiy, wiz), (cr, cg, cb), 1.0, True, 1.0)
    if kind == MAT_ROUGH_CONDUCTOR:
        alpha = mats[m, M_ALPHA]
        hx, hy, hz = ggx_sample_visible(alpha, wix, wiy, wiz, u1, u2)
        i_dot_h = wix * hx + wiy * hy + wiz * hz
        wox = 2.0 * i_dot_h * hx - wix
        woy = 2.0 * i_dot_h * hy - wiy
        woz = 2.0 * i_dot_h * hz - wiz
        if woz <= TINY or i_dot_h <= 0.0:
            return _no_sample()
        d = ggx_d(alpha, hx, hy, hz)
        g1i = ggx_g1(alpha, wix, wiy, wiz, i_dot_h)
        g1o = ggx_g1(alpha, wox, woy, woz, i_dot_h)
        pdf = d * g1i / (4.0 * wiz)
        if not pdf > 0.0:
            return _no_sample()
        weight = (schlick(cr, i_dot_h) * g1o, schlick(cg, i_dot_h) * g1o, schlick(cb, i_dot_h) * g1o)
        return _sampled((wox, woy, woz), weight, pdf, False, 1.0)
    # dielectric
    f, cos_t = fresnel_dielectric(wiz, eta)
    if u0 < f:
        return _sampled((-wix, -wiy, wiz), (1.0, 1.0, 1.0), f, True, 1.0)
    s = 1.0 / (eta * eta)
    return _sampled((-wix / eta, -wiy / eta, -cos_t), (s, s, s), 1.0 - f, True, eta)
