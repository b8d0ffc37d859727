"""Camera rays from the array made by :func:`raytrace.camera.camera_array`."""
from numba import njit


@njit(cache=True, inline="always")
def camera_ray(cam, width, height, x, y):
    """Ray through image position (x, y) in pixels (origin top-left, y down).

    Returns origin and (not normalised) direction as six floats.
    """
    half_h = cam[13]
    sy = (1.0 - 2.0 * y / height) * half_h
    sx = (2.0 * x / width - 1.0) * half_h * (width / height)
    if cam[0] == 0:       # perspective
        return (cam[1], cam[2], cam[3],
                cam[4] + sx * cam[7] + sy * cam[10],
                cam[5] + sx * cam[8] + sy * cam[11],
                cam[6] + sx * cam[9] + sy * cam[12])
    return (cam[1] + sx * cam[7] + sy * cam[10],
            cam[2] + sx * cam[8] + sy * cam[11],
            cam[3] + sx * cam[9] + sy * cam[12],
            cam[4], cam[5], cam[6])
