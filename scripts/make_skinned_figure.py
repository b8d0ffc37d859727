"""Build the small skinned figure shipped in scenes/assets/skinning/ (course file formats).

    .venv/bin/python scripts/make_skinned_figure.py [--out scenes/assets/skinning]

Writes ``figure.skel``, ``figure.attach`` and ``figure.obj``: a 1.8-unit-tall figure in
a T-pose (y up, facing +z, its left is +x) with 21 joints, made of closed tubes (torso,
neck and head, arms, legs, feet) whose weights blend smoothly across elbows, knees,
shoulders, hips, waist, neck, wrists and ankles. The joint table is printed and is
documented in docs/skinning.md. Output is deterministic.
"""
import argparse
import pathlib

import numpy as np

# name, absolute bind position, parent index
JOINTS = [
    ("root", (0.0, 0.90, 0.0), -1),
    ("hips", (0.0, 0.95, 0.0), 0),
    ("chest", (0.0, 1.30, 0.0), 1),
    ("neck", (0.0, 1.52, 0.0), 2),
    ("head", (0.0, 1.80, 0.0), 3),
    ("l_shoulder", (0.19, 1.46, 0.0), 2),
    ("l_elbow", (0.45, 1.46, 0.0), 5),
    ("l_wrist", (0.70, 1.46, 0.0), 6),
    ("l_hand", (0.81, 1.46, 0.0), 7),
    ("r_shoulder", (-0.19, 1.46, 0.0), 2),
    ("r_elbow", (-0.45, 1.46, 0.0), 9),
    ("r_wrist", (-0.70, 1.46, 0.0), 10),
    ("r_hand", (-0.81, 1.46, 0.0), 11),
    ("l_hip", (0.10, 0.90, 0.0), 1),
    ("l_knee", (0.10, 0.50, 0.02), 13),
    ("l_ankle", (0.10, 0.09, 0.0), 14),
    ("l_toe", (0.10, 0.03, 0.15), 15),
    ("r_hip", (-0.10, 0.90, 0.0), 1),
    ("r_knee", (-0.10, 0.50, 0.02), 17),
    ("r_ankle", (-0.10, 0.09, 0.0), 18),
    ("r_toe", (-0.10, 0.03, 0.15), 19),
]
J = {name: i for i, (name, _, _) in enumerate(JOINTS)}
POS = np.array([p for _, p, _ in JOINTS])
SPACING = 0.025
SLICES = 12


def smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3.0 - 2.0 * x)


def tube(path, radius, owners, bounds, half_width, ref, flatten=1.0):
    """A closed tube along a polyline with a pole at each end.

    path: (P,3) key points; radius(s, L) -> radius at arc length s of L; owners: joint
    names owning successive stretches; bounds: arc lengths where ownership passes from
    one owner to the next, blended over +-half_width; ref: a vector not along the path
    (fixes the cross-section frame); flatten: scale of the cross-section along ref x path.
    Returns vertices (V,3), faces (F,3) 0-based CCW from outside, dense weights (V, J).
    """
    path = np.asarray(path, dtype=float)
    seg = np.linalg.norm(np.diff(path, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    length = cum[-1]
    m = max(int(round(length / SPACING)), 4)
    s = np.linspace(0.0, length, m + 1)
    centers = np.stack([np.interp(s, cum, path[:, k]) for k in range(3)], axis=1)
    tangent = np.gradient(centers, axis=0)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    w = np.zeros((m + 1, len(JOINTS)))
    w[:, J[owners[0]]] = 1.0
    for b, nxt in zip(bounds, owners[1:]):
        a = smoothstep((s - b + half_width) / (2.0 * half_width))[:, None]
        onehot = np.zeros(len(JOINTS))
        onehot[J[nxt]] = 1.0
        w = (1.0 - a) * w + a * onehot
    verts, weights = [centers[0]], [w[0]]
    phi = 2.0 * np.pi * np.arange(SLICES) / SLICES
    for i in range(1, m):
        t = tangent[i]
        u = np.asarray(ref, float) - np.dot(ref, t) * t
        u /= np.linalg.norm(u)
        v = np.cross(t, u)                                   # (u, v, t) right-handed
        r = radius(s[i], length)
        ring = centers[i] + r * (np.cos(phi)[:, None] * u + flatten * np.sin(phi)[:, None] * v)
        verts.extend(ring)
        weights.extend([w[i]] * SLICES)
    verts.append(centers[-1])
    weights.append(w[-1])
    rings = m - 1
    ring = lambda i, k: 1 + i * SLICES + (k % SLICES)  # noqa: E731
    last = 1 + rings * SLICES
    faces = []
    for k in range(SLICES):
        faces.append((0, ring(0, k + 1), ring(0, k)))
        faces.append((last, ring(rings - 1, k), ring(rings - 1, k + 1)))
        for i in range(rings - 1):
            a, b = ring(i, k), ring(i, k + 1)
            c, d = ring(i + 1, k + 1), ring(i + 1, k)
            faces.append((a, b, c))
            faces.append((a, c, d))
    weights = np.array(weights)
    weights[:, J["root"]] = 0.0              # the course format has no root column
    weights /= weights.sum(axis=1, keepdims=True)
    return np.array(verts), np.array(faces), weights


def capsule(profile):
    """radius(s, L): piecewise-linear profile [(s, r), ...] rounded to 0 at both ends."""
    ps = np.array(profile, dtype=float)

    def radius(s, length):
        r = np.interp(s, ps[:, 0] * length, ps[:, 1])
        cap = r
        d = min(s, length - s)
        if d < cap:
            r *= np.sqrt(max(1.0 - ((cap - d) / cap) ** 2, 0.0))
        return max(r, 1e-3)
    return radius


def build():
    pieces = []
    # torso: hips -> chest, elliptical, waist narrower
    pieces.append(tube([(0, 0.80, 0), (0, 1.58, 0)],
                       capsule([(0, 0.15), (0.3, 0.13), (0.6, 0.17), (1, 0.15)]),
                       ["hips", "chest"], [0.40], 0.08, ref=(1, 0, 0), flatten=0.65))
    # neck and head: chest -> neck joint, head rigid on the neck joint
    pieces.append(tube([(0, 1.44, 0), (0, 1.82, 0)],
                       capsule([(0, 0.05), (0.3, 0.045), (0.42, 0.06), (0.65, 0.115),
                                (1, 0.11)]),
                       ["chest", "neck"], [0.07], 0.03, ref=(1, 0, 0), flatten=1.0))
    for side, sx in (("l", 1.0), ("r", -1.0)):
        sh, el, wr, ha = (POS[J[f"{side}_{n}"]] for n in ("shoulder", "elbow", "wrist", "hand"))
        start = sh - np.array([sx * 0.06, 0, 0])
        pieces.append(tube([start, el, wr, ha + np.array([sx * 0.02, 0, 0])],
                           capsule([(0, 0.06), (0.3, 0.047), (0.45, 0.042), (0.7, 0.032),
                                    (0.85, 0.04), (1, 0.035)]),
                           ["chest", f"{side}_shoulder", f"{side}_elbow", f"{side}_wrist"],
                           [0.05, 0.06 + np.linalg.norm(el - sh), 0.06 + np.linalg.norm(wr - sh)],
                           0.035, ref=(0, 1, 0), flatten=0.9))
        hip, knee, ankle = (POS[J[f"{side}_{n}"]] for n in ("hip", "knee", "ankle"))
        top = hip + np.array([0, 0.06, 0])
        l1 = np.linalg.norm(knee - top)
        l2 = l1 + np.linalg.norm(ankle - knee)
        pieces.append(tube([top, knee, ankle + np.array([0, -0.04, 0])],
                           capsule([(0, 0.08), (0.45, 0.055), (0.9, 0.04), (1, 0.04)]),
                           ["hips", f"{side}_hip", f"{side}_knee", f"{side}_ankle"],
                           [0.07, l1, l2 - 0.01], 0.04, ref=(0, 0, 1)))
        heel = np.array([sx * 0.10, 0.05, -0.05])
        toe = POS[J[f"{side}_toe"]] + np.array([0, 0.0, 0.03])
        pieces.append(tube([heel, toe], capsule([(0, 0.05), (1, 0.045)]),
                           [f"{side}_ankle"], [], 0.01, ref=(1, 0, 0), flatten=0.7))
    verts, faces, weights, off = [], [], [], 0
    for v, f, w in pieces:
        verts.append(v)
        faces.append(f + off)
        weights.append(w)
        off += v.shape[0]
    return np.vstack(verts), np.vstack(faces), np.vstack(weights)


def write(out):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    verts, faces, weights = build()
    with open(out / "figure.skel", "w") as f:
        for name, p, parent in JOINTS:
            rel = np.array(p) - (POS[parent] if parent >= 0 else 0.0)
            f.write(f"{rel[0]:.6f} {rel[1]:.6f} {rel[2]:.6f} {parent}\n")
    with open(out / "figure.obj", "w") as f:
        f.write("# skinned figure, generated by scripts/make_skinned_figure.py\n")
        for v in verts:
            f.write(f"v {v[0]:.6f} {v[1]:.6f} {v[2]:.6f}\n")
        for a, b, c in faces + 1:
            f.write(f"f {a} {b} {c}\n")
    with open(out / "figure.attach", "w") as f:
        for w in weights[:, 1:]:
            w = np.round(w, 4)
            f.write(" ".join("0" if x == 0 else f"{x:.4f}".rstrip("0").rstrip(".") for x in w) + "\n")
    print(f"{len(JOINTS)} joints, {len(verts)} vertices, {len(faces)} triangles -> {out}")
    for i, (name, p, parent) in enumerate(JOINTS):
        print(f"  {i:2d} {name:11s} parent {parent:2d}  at {p}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="scenes/assets/skinning", help="output folder")
    write(ap.parse_args().out)
