"""Typical student bugs, as edits of the Whitted integrator's code: the grader's test set.

Each mutation is a list of (file within the package, exact text, replacement) applied to
a copy of the package; the showcase (``scenes/showcase.json``) rendered from the copy
must fail the default grade against ``renders/showcase.png``
(``tests/test_grade_mutations.py``), while renders of the unedited code with another
seed or thread count pass. ``scripts/mutation_study.py`` prints every metric of each,
the table of ``docs/grading.md``.
"""
import pathlib
import shutil

MUTATIONS = {
    "specular halved": [("kernels/whitted.py", "spec * ks)", "0.5 * spec * ks)")],
    "specular missing": [("kernels/whitted.py", "spec * ks)", "0.0 * ks)")],
    "ambient missing": [("kernels/whitted.py",
                         "lr, lg, lb = env.ambient[0] * kd0, env.ambient[1] * kd1, env.ambient[2] * kd2",
                         "lr, lg, lb = 0.0, 0.0, 0.0")],
    "a light missing": [("kernels/whitted.py", "for li in range(lights.kind.shape[0]):",
                         "for li in range(lights.kind.shape[0] - 1):")],
    "no shadow-ray offset": [("kernels/whitted.py", "sx, sy, sz = px + eps * nx, py + eps * ny, pz + eps * nz",
                              "sx, sy, sz = px, py, pz")],
    "mirror direction flipped": [("kernels/whitted.py",
                                  "rx, ry, rz = dx + 2.0 * cos_i * nx, dy + 2.0 * cos_i * ny, dz + 2.0 * cos_i * nz",
                                  "rx, ry, rz = dx - 2.0 * cos_i * nx, dy - 2.0 * cos_i * ny, dz - 2.0 * cos_i * nz")],
    "refraction index inverted": [("kernels/whitted.py", "n1, n2 = (1.0, ior) if entering else (ior, 1.0)",
                                   "n1, n2 = (ior, 1.0) if entering else (1.0, ior)")],
    "normals not inverse-transposed": [
        ("kernels/surface.py", "nx = a[idx, 0, 0] * qx + a[idx, 1, 0] * qy + a[idx, 2, 0] * qz",
         "nx = a[idx, 0, 0] * qx + a[idx, 0, 1] * qy + a[idx, 0, 2] * qz"),
        ("kernels/surface.py", "ny = a[idx, 0, 1] * qx + a[idx, 1, 1] * qy + a[idx, 2, 1] * qz",
         "ny = a[idx, 1, 0] * qx + a[idx, 1, 1] * qy + a[idx, 1, 2] * qz"),
        ("kernels/surface.py", "nz = a[idx, 0, 2] * qx + a[idx, 1, 2] * qy + a[idx, 2, 2] * qz",
         "nz = a[idx, 2, 0] * qx + a[idx, 2, 1] * qy + a[idx, 2, 2] * qz")],
    "camera off by half a pixel": [
        ("kernels/camera_rays.py", "sy = (1.0 - 2.0 * y / height) * cam.half_height",
         "sy = (1.0 - 2.0 * (y + 0.5) / height) * cam.half_height"),
        ("kernels/camera_rays.py", "sx = (2.0 * x / width - 1.0) * cam.half_height * (width / height)",
         "sx = (2.0 * (x + 0.5) / width - 1.0) * cam.half_height * (width / height)")],
    "sRGB applied twice": [("image.py", "x = linear_to_srgb(x) if encoding == \"srgb\" else np.clip(x, 0.0, 1.0)",
                            "x = linear_to_srgb(linear_to_srgb(x)) if encoding == \"srgb\" else np.clip(x, 0.0, 1.0)")],
}


def copy_packages(repo, dest):
    """A copy of ``raytrace`` and ``userio`` (what a render imports) under ``dest``."""
    for package in ("raytrace", "userio"):
        shutil.copytree(pathlib.Path(repo) / package, pathlib.Path(dest) / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return pathlib.Path(dest)


def apply(root, edits):
    """Apply one mutation's edits to the package copy at ``root``; returns the original
    texts ({path: text}) for :func:`undo`. Each edited text must occur exactly once."""
    originals = {}
    for rel, old, new in edits:
        path = pathlib.Path(root) / "raytrace" / rel
        text = originals.setdefault(path, path.read_text()) if path not in originals else path.read_text()
        if text.count(old) != 1:
            raise ValueError(f"{rel}: expected exactly one {old!r} (found {text.count(old)})")
        path.write_text(text.replace(old, new))
    return originals


def undo(originals):
    for path, text in originals.items():
        path.write_text(text)
