"""Camera rays from a :class:`raytrace.layout.Camera`."""
from numba import njit

from ..layout import PERSPECTIVE


@njit(cache=True, inline="always")
def camera_ray(cam, width, height, x, y):
    """Ray through image position (x, y) in pixels (origin top-left, y down).

    Returns origin and (not normalised) direction as six floats.
    """
    sy = (1.0 - 2.0 * y / height) * cam.half_height
    sx = (2.0 * x / width - 1.0) * cam.half_height * (width / height)
    if cam.kind == PERSPECTIVE:
        return (cam.eye_x, cam.eye_y, cam.eye_z,
                cam.forward_x + sx * cam.right_x + sy * cam.up_x,
                cam.forward_y + sx * cam.right_y + sy * cam.up_y,
                cam.forward_z + sx * cam.right_z + sy * cam.up_z)
    return (cam.eye_x + sx * cam.right_x + sy * cam.up_x,
            cam.eye_y + sx * cam.right_y + sy * cam.up_y,
            cam.eye_z + sx * cam.right_z + sy * cam.up_z,
            cam.forward_x, cam.forward_y, cam.forward_z)
