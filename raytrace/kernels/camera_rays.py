"""Camera rays from a :class:`raytrace.layout.Camera`: a pinhole (or orthographic)
camera, and the thin lens around it."""
import math

from raytrace.jit import helper, kernel, unit

from ..layout import PERSPECTIVE


@helper
def camera_ray(cam, width, height, x, y):
    """Pinhole ray through image position (x, y) in pixels (origin top-left, y down).

    Returns (origin (3), direction (3), not normalised); a perspective ray's
    direction has length 1 along ``forward``.
    """
    sy = (1.0 - 2.0 * y / height) * cam.half_height
    sx = (2.0 * x / width - 1.0) * cam.half_height * (width / height)
    if cam.kind == PERSPECTIVE:
        return ((cam.eye_x, cam.eye_y, cam.eye_z),
                (cam.forward_x + sx * cam.right_x + sy * cam.up_x,
                 cam.forward_y + sx * cam.right_y + sy * cam.up_y,
                 cam.forward_z + sx * cam.right_z + sy * cam.up_z))
    return ((cam.eye_x + sx * cam.right_x + sy * cam.up_x,
             cam.eye_y + sx * cam.right_y + sy * cam.up_y,
             cam.eye_z + sx * cam.right_z + sy * cam.up_z),
            (cam.forward_x, cam.forward_y, cam.forward_z))


@unit      # compiled once; a Numba-inlined copy upsets parfors' array analysis (render_ids)
def centre_ray(cam, width, height, i, j):
    """The pinhole ray through the centre of pixel (row i, column j) -> (origin (3), unit
    direction (3))."""
    (ox, oy, oz), (dx, dy, dz) = camera_ray(cam, width, height, j + 0.5, i + 0.5)
    inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz)
    return (ox, oy, oz), (dx * inv, dy * inv, dz * inv)


@helper
def concentric_disk(u1, u2):
    """Shirley and Chiu's area-preserving map of [0, 1)^2 onto the unit disk."""
    a = 2.0 * u1 - 1.0
    b = 2.0 * u2 - 1.0
    if a == 0.0 and b == 0.0:
        return 0.0, 0.0
    if abs(a) > abs(b):
        r, phi = a, 0.25 * math.pi * (b / a)
    else:
        r, phi = b, 0.5 * math.pi - 0.25 * math.pi * (a / b)
    return r * math.cos(phi), r * math.sin(phi)


@helper
def lens_ray(cam, ox, oy, oz, dx, dy, dz, u1, u2):
    """The thin-lens ray for the pinhole ray (o, d) of :func:`camera_ray`: from the lens
    point of (u1, u2) through the pinhole ray's point on the plane in focus (which
    therefore stays sharp). Unchanged without a lens."""
    if cam.lens_radius <= 0.0:
        return (ox, oy, oz), (dx, dy, dz)
    f = cam.focus_distance             # d . forward = 1: the plane in focus is at t = f
    px, py, pz = ox + f * dx, oy + f * dy, oz + f * dz
    a, b = concentric_disk(u1, u2)
    a *= cam.lens_radius
    b *= cam.lens_radius
    lx = ox + a * cam.right_x + b * cam.up_x
    ly = oy + a * cam.right_y + b * cam.up_y
    lz = oz + a * cam.right_z + b * cam.up_z
    return (lx, ly, lz), (px - lx, py - ly, pz - lz)


@kernel
def centre_rays(cam, origins, dirs):
    """Pinhole rays through every pixel centre of an (H, W) image into ``origins`` and
    ``dirs`` ((H, W, 3); directions unit)."""
    height, width = origins.shape[0], origins.shape[1]
    for i in range(height):
        for j in range(width):
            (ox, oy, oz), (dx, dy, dz) = centre_ray(cam, width, height, i, j)
            origins[i, j, 0], origins[i, j, 1], origins[i, j, 2] = ox, oy, oz
            dirs[i, j, 0], dirs[i, j, 1], dirs[i, j, 2] = dx, dy, dz
