"""The contract between the Python side and the kernels: kinds, array layouts, records.

Both sides import this module and nothing else of each other: the scene builders
(``raytrace.scene``) fill these layouts, the kernels (``raytrace.kernels``,
``raytrace.accel``) read them. Everything a kernel receives is one of the records below
(a ``NamedTuple`` of contiguous arrays and scalars) or a plain array described here.

Records and what fills them:

- :class:`Settings`: the resolved render settings (``raytrace.renderer``); integers
  are integers (the seed is exact up to 2^63 - 1);
- :class:`Camera`: the camera frame (``raytrace.camera.make_camera``);
- :class:`Geometry`: every shape as flat arrays (``raytrace.scene.build``), with the
  material table laid out by :data:`MATERIAL`;
- :class:`Lights`: the path tracer's emitters as one discrete distribution
  (``raytrace.scene.emitters``); :class:`PunctualLights` the Whitted integrator's
  point and directional lights (``raytrace.scene.lights``);
- :class:`Environment`: background colour or environment map (cube or lat-long) with
  its sampling tables (both integrators), ambient light (Whitted);
- :class:`Hit`: what a BVH's closest-hit query returns; :class:`SceneHit` the same for
  the whole scene (BVH, instances and planes).

Conventions: float64 world space, right-handed, y up; colours linear RGB.
"""
from typing import NamedTuple

import numpy as np

# ------------------------------------------------------------------------------ hit kinds
MISS, TRIANGLE, SPHERE, PLANE = 0, 1, 2, 3


class Hit(NamedTuple):
    """A closest-hit record: ``t`` along the ray (``inf`` on a miss), ``kind`` (MISS,
    TRIANGLE, SPHERE, PLANE), ``index`` into the shape's arrays (-1 on a miss) and, for
    triangles, the barycentrics ``u, v`` of ``v1, v2`` (0 otherwise)."""
    t: float
    kind: int
    index: int
    u: float
    v: float


class SceneHit(NamedTuple):
    """A :class:`Hit` in the whole scene: ``instance`` is the instance whose prototype
    was hit (its primitives' arrays hold object-space data; see Geometry.inst_w2o), or
    -1 for a primitive placed in world space."""
    t: float
    kind: int
    index: int
    u: float
    v: float
    instance: int


# ----------------------------------------------------------------------- BVH leaf encoding
# A wide node's child id is an int32: >= 0 an inner node, < 0 a leaf ``~x`` with
# x = start << 4 | count << 1 | kind (count: 4-triangle blocks or spheres, at most 7).
# The kernels' encoders and readers: encode_leaf, leaf_kind, leaf_count, leaf_start in
# raytrace.accel.build (this module imports no Numba, so the command line's --help does not).
LEAF_KIND_TRI, LEAF_KIND_SPH = 0, 1
LEAF_MAX_COUNT = 7


# ------------------------------------------------------------------------ material table
# One float64 row per material; the Python side fills it through this structured dtype
# (``rows["diffuse"][k] = ...``), kernels read the same memory as a (M, MATERIAL_WIDTH)
# float64 table through the column numbers below. The course's Phong model first (what
# the Whitted integrator reads), then the path tracer's type, base colour, texture and
# GGX roughness. ``type`` and ``texture`` hold small integers (exact in float64).
MATERIAL = np.dtype([
    ("diffuse", "<f8", (3,)),     # k_d
    ("specular", "<f8", (3,)),    # k_s
    ("shininess", "<f8"),         # Phong exponent s
    ("reflect", "<f8", (3,)),     # mirror weight
    ("transmit", "<f8", (3,)),    # refraction weight
    ("ior", "<f8"),               # index of refraction (inside / outside)
    ("type", "<f8"),              # MAT_* below
    ("color", "<f8", (3,)),       # the path tracer's base colour
    ("texture", "<f8"),           # texture row, -1 for none
    ("alpha", "<f8"),             # GGX roughness of rough_conductor
    ("cutout", "<f8"),            # coverage texture row (its red channel), -1 for none
    ("cutoff", "<f8"),            # >= 0: a cut-out, kept where coverage >= cutoff (glTF MASK);
                                  # -1: stochastic, kept with probability = coverage (BLEND)
])
MATERIAL_WIDTH = MATERIAL.itemsize // 8


def _column(name):
    return MATERIAL.fields[name][1] // 8


M_DIFFUSE = _column("diffuse")
M_SPECULAR = _column("specular")
M_SHININESS = _column("shininess")
M_REFLECT = _column("reflect")
M_TRANSMIT = _column("transmit")
M_IOR = _column("ior")
M_TYPE = _column("type")
M_COLOR = _column("color")
M_TEX = _column("texture")
M_ALPHA = _column("alpha")
M_CUTOUT = _column("cutout")
M_CUTOFF = _column("cutoff")

# material types (column M_TYPE)
MAT_PHONG, MAT_DIFFUSE, MAT_CONDUCTOR, MAT_ROUGH_CONDUCTOR, MAT_DIELECTRIC = 0, 1, 2, 3, 4
MATERIAL_TYPES = {"phong": MAT_PHONG, "diffuse": MAT_DIFFUSE, "conductor": MAT_CONDUCTOR,
                  "rough_conductor": MAT_ROUGH_CONDUCTOR, "dielectric": MAT_DIELECTRIC}
# "null": no surface, only a boundary between media (Mitsuba's ``null`` BSDF). Its row is
# an index-matched dielectric (ior 1: no reflection, no bending); the volumetric path
# tracer passes through it without counting a bounce (see :class:`Media`).
MAT_NULL = 5
MATERIAL_TYPES["null"] = MAT_NULL


def new_material_records(n):
    """(n,) zeroed structured array of :data:`MATERIAL` records."""
    return np.zeros(n, MATERIAL)


def material_columns(rows):
    """The (n, MATERIAL_WIDTH) float64 view of :data:`MATERIAL` records (no copy)."""
    return np.ascontiguousarray(rows).view(np.float64).reshape(len(rows), MATERIAL_WIDTH)


# ---------------------------------------------------------------------------- geometry
class Geometry(NamedTuple):
    """Flat arrays describing the scene's shapes (all float64 unless noted).

    Triangles live in world space; spheres are unit spheres seen through affine maps;
    planes (infinite, outside the BVH) are ``dot(n, p) = d`` in world space. Emitter rows
    index ``emission``; -1 means the shape does not emit.

    Instancing: the first ``world_tris`` triangles and ``world_spheres`` spheres are placed
    in world space; the rest belong to prototypes (``proto_tris[p]``, ``proto_spheres[p]``:
    [start, end) ranges) and hold object-space data, placed by instances: instance ``i``
    shows prototype ``inst_proto[i]`` through the affine map ``inst_w2o[i]`` (world ->
    object), with ``inst_mat[i]`` for the prototype's primitives whose material row is -1
    (none of their own). Prototype primitives never emit.

    Object ids: every leaf object of the scene (a sphere, a mesh, an instance, ...) has
    an id, in the order the scene lists them (``Scene.object_names`` names them); a hit
    on an instance has the instance's id.

    Vertex colours: triangle ``t`` with ``tri_color_row[t] >= 0`` multiplies its base colour
    (the material's colour or texture, both integrators) by the barycentric blend of the
    linear RGB ``corner_colors[tri_color_row[t]]`` (one row per corner).

    Coverage: a material row with a ``cutout`` texture (see :data:`MATERIAL`) is partly
    transparent; ``cutouts`` counts such rows (0: every surface is opaque and the scene
    queries skip the coverage test)."""
    tri_v0: np.ndarray          # (T,3) world-space vertices
    tri_v1: np.ndarray
    tri_v2: np.ndarray
    tri_n: np.ndarray           # (T,3,3) world-space unit normal at each corner
    tri_mat: np.ndarray         # (T,) int64 material row
    sph_w2o: np.ndarray         # (S,3,4) world -> unit-sphere space
    sph_lo: np.ndarray          # (S,3) world AABB
    sph_hi: np.ndarray
    sph_mat: np.ndarray         # (S,) int64
    pl_n: np.ndarray            # (P,3) unit normals, world
    pl_d: np.ndarray            # (P,) offsets: dot(n, p) = d
    pl_mat: np.ndarray          # (P,) int64
    materials: np.ndarray       # (M, MATERIAL_WIDTH) see MATERIAL
    tri_ng: np.ndarray          # (T,3) unit geometric normal, on the side of the corner normals
    tri_uv: np.ndarray          # (T,3,2) texture coordinates per corner
    tri_emit: np.ndarray        # (T,) int64 row of `emission`, -1 = not emissive
    sph_o2w: np.ndarray         # (S,3,4) unit-sphere space -> world
    sph_center: np.ndarray      # (S,3) world centre
    sph_radius: np.ndarray      # (S,) radius when the sphere is round in world space, else 0
    sph_emit: np.ndarray        # (S,) int64
    pl_uv: np.ndarray           # (P,2,4) u = pl_uv[p,0,:3].x + pl_uv[p,0,3], v likewise
    emission: np.ndarray        # (E,3) emitted radiance, linear RGB
    tex_info: np.ndarray        # (K, TEX_WIDTH) see raytrace.textures
    tex_texels: np.ndarray      # (N,3) float32 linear texels
    inst_w2o: np.ndarray        # (I,3,4) world -> prototype (object) space
    inst_lo: np.ndarray         # (I,3) world AABB of each instance
    inst_hi: np.ndarray
    inst_mat: np.ndarray        # (I,) int64 material row for the prototype's "inherit" (-1) rows
    inst_proto: np.ndarray      # (I,) int64 prototype index
    proto_tris: np.ndarray      # (P,2) int64 [start, end) of each prototype's triangles
    proto_spheres: np.ndarray   # (P,2) int64 [start, end) of each prototype's spheres
    inst_obj: np.ndarray        # (I,) int64 object id of each instance
    tri_obj: np.ndarray         # (T,) int64 object id (-1 inside shared prototypes)
    sph_obj: np.ndarray         # (S,) int64
    pl_obj: np.ndarray          # (P,) int64
    tri_color_row: np.ndarray   # (T,) int64 row of `corner_colors`, -1 = no vertex colours
    corner_colors: np.ndarray   # (C,3,3) linear RGB at each corner of a coloured triangle
    cutouts: int                # material rows with a coverage texture (0: all opaque)
    world_tris: int             # triangles [0, world_tris) are in world space
    world_spheres: int          # spheres [0, world_spheres) are in world space


# ------------------------------------------------------------------------------ lights
LIGHT_TRIANGLE, LIGHT_SPHERE, LIGHT_POINT, LIGHT_DIRECTIONAL, LIGHT_ENV = 0, 1, 2, 3, 4
ENV_NONE, ENV_CONSTANT, ENV_CUBE, ENV_LATLONG = 0, 1, 2, 3

# Spot lights are point lights with a cone: one row of CONE_WIDTH float64 per point light,
# [mode, cos_outer, cos_inner, p, q]. CONE_NONE: no cone (a point light); CONE_LINEAR:
# Mitsuba's ``spot`` (outer = cutoff_angle, inner = beam_width), falloff linear in the
# angle, ``(p - theta) q`` with p = cutoff (radians), q = 1 / (cutoff - beam_width);
# CONE_SMOOTH: glTF's KHR_lights_punctual spot (outer/inner cone angles), falloff
# ``clamp(cos(theta) p + q, 0, 1)^2`` with p = 1 / max(0.001, cos_inner - cos_outer),
# q = -cos_outer p. Zero where cos(theta) <= cos_outer, one where >= cos_inner.
CONE_NONE, CONE_LINEAR, CONE_SMOOTH = 0, 1, 2
CONE_WIDTH = 5


class Lights(NamedTuple):
    """The path tracer's emitters: entries of one discrete distribution (by power). The
    environment's own radiance and sampling tables are in :class:`Environment`."""
    kind: np.ndarray        # (L,) int64 LIGHT_*
    index: np.ndarray       # (L,) int64 triangle, sphere or delta-light row
    pmf: np.ndarray         # (L,) selection probability
    cdf: np.ndarray         # (L+1,) running sum of pmf, cdf[0] = 0, cdf[L] = 1
    tri_entry: np.ndarray   # (T,) int64 entry of each triangle, -1 when it does not emit
    sph_entry: np.ndarray   # (S,) int64
    delta_pos: np.ndarray   # (D,3) point light position / directional unit travel direction
    delta_val: np.ndarray   # (D,3) intensity W/sr (point; a spot's on its axis) / irradiance W/m^2 (directional)
    delta_axis: np.ndarray  # (D,3) a spot's unit axis (the direction it shines), 0 otherwise
    delta_cone: np.ndarray  # (D,CONE_WIDTH) a point light's cone (CONE_NONE for none)
    env_entry: int          # entry of the environment, -1 for none


class PunctualLights(NamedTuple):
    """The Whitted integrator's lights (the course's units, not physical ones) and their
    shadow maps (``raytrace.kernels.shadowmap``). A spot is a point light with a cone."""
    kind: np.ndarray          # (n,) int64 LIGHT_POINT or LIGHT_DIRECTIONAL
    pos_dir: np.ndarray       # (n,3) position, or unit direction of travel
    color: np.ndarray         # (n,3) intensity I
    attenuation: np.ndarray   # (n,) L = I / (attenuation d^2); 0 = no fall-off
    shadow_map: np.ndarray    # (n,) int64: -1 shadow rays, else the offset of the map in `depths`
    shadow_res: np.ndarray    # (n,) int64 texels per side (per cube face for a point light)
    shadow_bias: np.ndarray   # (n,) the course's bias: in shadow when d - bias > stored depth
    shadow_pcf: np.ndarray    # (n,) int64 percentage-closer filter radius in texels (0: none)
    shadow_frame: np.ndarray  # (n,4,3) directional: map origin, u, v (unit), (half extent, 0, 0)
    depths: np.ndarray        # (K,) float64 every map's depths, texel after texel
    axis: np.ndarray          # (n,3) a spot's unit axis, 0 otherwise
    cone: np.ndarray          # (n,CONE_WIDTH) a point light's cone (CONE_NONE for none)


class Environment(NamedTuple):
    """What a ray that escapes sees (both integrators), the Whitted integrator's ambient
    term, and how the path tracer samples the environment as a light
    (``raytrace.scene.emitters.build_environment``).

    ``kind``: ENV_NONE (black), ENV_CONSTANT (``color`` in every direction), ENV_CUBE
    (``texels`` holds the six S x S faces of ``raytrace.cubemap``), ENV_LATLONG
    (``texels[0]`` is an H x W latitude-longitude image, ``raytrace.envmap``: Mitsuba's
    ``envmap`` layout). A map is looked up in the direction ``to_map @ d`` of a world
    direction d (``to_map`` is the inverse of the map's rotation, Mitsuba's
    ``to_world``); its texels already include the ``scale``.

    Sampling (ENV_CUBE, ENV_LATLONG): ``pmf`` / ``cdf`` / ``guide`` over the cube's texels
    (6 S S) or the lat-long map's cells, the W (H - 1) patches between four texel centres,
    uniform in solid angle within a cell, whose density (solid angle) is ``density``."""
    kind: int                 # ENV_*
    color: np.ndarray         # (3,) background colour: the constant environment's radiance
    ambient: np.ndarray       # (3,) I_amb (Whitted)
    texels: np.ndarray        # (F,H,W,3) float32 linear radiance; (1,1,1,3) zeros without a map
    to_map: np.ndarray        # (3,3) world direction -> map direction (a rotation)
    pmf: np.ndarray           # (N,) texel or cell probabilities ((1,) without a map)
    cdf: np.ndarray           # (N+1,)
    guide: np.ndarray         # (N,) int64 guide table of cdf (raytrace.scene.emitters.guide_table)
    density: np.ndarray       # (N,) lat-long: each cell's pmf / its solid angle ((1,) otherwise)


# ------------------------------------------------------------------------- participating media
MEDIUM_HOMOGENEOUS, MEDIUM_GRID = 0, 1
# a grid medium's row of Media.grid (int64): its density grid (offset into ``voxels``,
# resolution, channels 1 or 3), its albedo grid (offset, or -1 for a constant albedo;
# resolution, channels) and its majorant grid (offset into ``majorant``, resolution, and
# the side of a majorant cell in density voxels)
(G_DENSITY, G_NX, G_NY, G_NZ, G_CHANNELS, G_ALBEDO, G_ANX, G_ANY, G_ANZ, G_ACHANNELS,
 G_MAJORANT, G_MX, G_MY, G_MZ, G_BLOCK) = range(15)
GRID_WIDTH = 15
# A kernel must always end: the step cap of delta and ratio tracking in grid media. One
# path (its free flights and its shadow rays' ratio tracking together) takes at most
# this many tentative (null or real) collisions; counted by the path's counter of media
# random numbers (raytrace.kernels.media), which a free-flight collision advances by two
# and a ratio-tracking step by one, up to 2 * MAX_NULL_COLLISIONS. A path that reaches
# it ends with radiance 0 (the whole sample, what it had gathered included: it counts as
# a sample of value 0, as a non-finite one does) and its pixel is counted
# (RenderInfo.capped; the CLI says how many). Ordinary media take a few hundred at most;
# a grid whose majorant dwarfs the density (voxels of 1e30 beside zeros, or 1e9 null
# collisions per unit length) would otherwise spin for ever. A capped path costs about
# 12 ms of one core (measured: 160 of them in 1 s on 2 threads).
MAX_NULL_COLLISIONS = 1 << 16


class Media(NamedTuple):
    """Participating media (``raytrace.scene.media.build_media``; read by the path tracer,
    the Whitted integrator's Beer-Lambert attenuation and the transmittance view, all
    through ``raytrace.kernels.media``).

    Medium k (rows of the (N, ...) arrays) is homogeneous (MEDIUM_HOMOGENEOUS: extinction
    ``sigma_t[k]`` per RGB channel, in 1 / world unit) or a grid (MEDIUM_GRID: extinction
    ``sigma_t[k, c] * density_c(x)``, density trilinear in the grid ``grid[k]``, zero
    outside its box; ``to_grid[k]`` maps world points to voxel space, where the box is
    [0, nx] x [0, ny] x [0, nz] and voxel (i, j, l) is centred at (i, j, l) + 0.5). The
    single-scattering albedo is ``albedo[k]``, or the albedo grid's value at x. Phase
    function: Henyey-Greenstein with asymmetry ``g[k]`` (0: isotropic).

    Which medium a ray is in: surfaces of material row m lead into ``mat_interior[m]``
    (crossed against the shape's front normal) and out into ``mat_exterior[m]`` (-1: no
    medium); a ray starts from the camera in ``camera``."""
    kind: np.ndarray          # (N,) int64 MEDIUM_*
    sigma_t: np.ndarray       # (N,3) extinction (homogeneous) or the grid's multiplier (scale)
    albedo: np.ndarray        # (N,3) sigma_s / sigma_t (a grid medium without an albedo grid)
    g: np.ndarray             # (N,) Henyey-Greenstein asymmetry in (-1, 1)
    to_grid: np.ndarray       # (N,3,4) world -> voxel space of the grid (identity for homogeneous)
    grid: np.ndarray          # (N,GRID_WIDTH) int64, see G_* (grid media)
    voxels: np.ndarray        # (V,) float32 every grid's values, voxel after voxel (x fastest), channels innermost
    majorant: np.ndarray      # (Q,) float64 per majorant cell: the largest extinction in it, any channel
    mat_interior: np.ndarray  # (M,) int64 medium inside the surfaces of each material row, -1 none
    mat_exterior: np.ndarray  # (M,) int64 medium outside, -1 none
    camera: int               # the medium the camera is in, -1 none
    has_null: bool            # some material is "null" (shadow rays must look through surfaces)


# ------------------------------------------------------------------------------ camera
PERSPECTIVE, ORTHOGRAPHIC = 0, 1


class Camera(NamedTuple):
    """A camera frame (scalars only: Numba's parallel loops take no nested tuples).

    A pixel position maps to ``forward + x right + y up`` (perspective: the ray direction
    from ``eye``) or moves the origin by ``x right + y up`` (orthographic), with ``y``
    spanning ``half_height`` and ``x`` the same times width / height. With a thin lens
    the ray starts at a point of the lens disk (radius ``lens_radius`` around ``eye``, in
    the right/up plane) and passes through the pinhole ray's point on the plane in focus
    (``focus_distance`` along ``forward``)."""
    kind: int                 # PERSPECTIVE or ORTHOGRAPHIC
    eye_x: float
    eye_y: float
    eye_z: float
    forward_x: float          # unit view direction
    forward_y: float
    forward_z: float
    right_x: float            # unit, forward x up
    right_y: float
    right_z: float
    up_x: float               # unit, right x forward
    up_y: float
    up_z: float
    half_height: float        # tan(fov / 2) (perspective) or half the view height
    lens_radius: float        # thin lens: aperture radius (0: a pinhole)
    focus_distance: float     # thin lens: distance of the plane in focus, along forward


# ------------------------------------------------------------------------------ AOVs
# Arbitrary output variables. The filtered ones are accumulated per pixel over the same
# samples as the colour (float64 columns of the AOV buffer below), then divided: albedo
# and normal by the samples, depth and position by the samples that hit something. The
# id AOVs come through the pixel centres (exact integers, -1 for nothing); "samples" is
# the number of colour samples each pixel took, less those dropped as NaN or infinite
# (adaptive sampling makes it differ, see raytrace.film.adaptive). With adaptive
# sampling the filtered AOVs use the first min_spp samples (the pilot).
AOV_ALBEDO, AOV_NORMAL, AOV_DEPTH, AOV_POSITION, AOV_UV, AOV_HITS = 0, 3, 6, 7, 10, 12
AOV_WIDTH = 13
FILTERED_AOVS = {"albedo": (AOV_ALBEDO, 3), "normal": (AOV_NORMAL, 3), "depth": (AOV_DEPTH, 1),
                 "position": (AOV_POSITION, 3), "uv": (AOV_UV, 2)}
ID_AOVS = ("object_id", "material_id")
AOVS = tuple(FILTERED_AOVS) + ID_AOVS + ("samples",)
PATH_SAMPLING, WHITTED_SAMPLING = 0, 1      # whose camera samples an AOV pass follows


# --------------------------------------------------------------------------- settings
BOX, TENT, GAUSSIAN = 0, 1, 2
FILTERS = {"box": BOX, "tent": TENT, "gaussian": GAUSSIAN}
INDEPENDENT, SOBOL = 0, 1
SAMPLERS = {"independent": INDEPENDENT, "sobol": SOBOL}
SEED_MAX = 2 ** 63 - 1


class Settings(NamedTuple):
    """Resolved render settings as the kernels read them (both integrators)."""
    width: int
    height: int
    spp: int
    filter: int               # BOX, TENT, GAUSSIAN
    seed: int                 # 0 .. SEED_MAX
    epsilon: float            # ray offset
    bounces: int              # Whitted: reflection / refraction depth
    shadows: bool             # Whitted: shadow rays
    max_depth: int            # path: longest path, -1 unbounded (Mitsuba's meaning)
    rr_depth: int             # path: depth where Russian roulette starts
    sampler: int              # path: INDEPENDENT or SOBOL
    row_stride: int           # path: rows are visited as (k * row_stride) % height
