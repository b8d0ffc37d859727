"""Merging renders of one scene made with different seeds (``raytrace merge``).

Each input is an EXR written by ``raytrace render`` (its header carries ``spp``, ``seed``
and the settings). The merged colour is the mean of the inputs weighted by their samples
per pixel, ``sum(spp_i * c_i) / sum(spp_i)``: exactly the estimator one render with all
the samples would be (for independent seeds, the error of one render of ``sum(spp_i)``
samples with the independent sampler; with the default Sobol sampler each input is
stratified on its own, so the merge is as good as the inputs' average, slightly worse
than one Sobol render of all the samples). Renders with the same seed hold the same
samples: they are refused, as are different sizes, scenes or settings.

Layers: ``noisy`` (a denoised render's raw colour) is merged as the colour, the filtered
AOVs (albedo, normal, position, UV, depth) the same way (depth, position and UV over the
renders that saw something there), ``variance`` as ``sum(spp_i^2 v_i) / sum(spp_i)^2``,
``samples`` summed; the id layers must agree (they come through the pixel centres).
"""
import numpy as np
from userio.limits import check_int, check_number

from ..errors import SceneError
from .aov_files import ID_LAYERS, IMAGE_SETTINGS, read_render

AVERAGED = ("albedo", "normal")
HIT_AVERAGED = ("depth", "position", "uv")       # meaningful only where something was hit
SUMMED_META = ("spp", "spp_requested", "nonfinite", "seconds", "compile_seconds")
FLOAT_META = ("seconds", "compile_seconds")      # the others are counts


def _seeds(meta, path=None):
    if "seeds" in meta:
        parts = str(meta["seeds"]).split(",")
        return [_meta_int(s, path, "raytrace:seeds", 0, 2 ** 64) for s in parts]
    return [_meta_int(meta["seed"], path, "raytrace:seed", 0, 2 ** 64)]


def _meta_int(value, path, field, lo, hi):
    """A whole number from an EXR header (an int, or text for counts beyond 32 bits) in
    [lo, hi]; SceneError naming the file and the attribute otherwise."""
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        value = int(value)
    return check_int(value, field, lo, hi, SceneError, path)


def _check_meta(path, meta):
    """The header numbers a merge adds up: whole counts in range, finite times."""
    _meta_int(meta["spp"], path, "raytrace:spp", 1, 2 ** 40)
    for key in ("spp_requested", "nonfinite"):
        if key in meta:
            _meta_int(meta[key], path, f"raytrace:{key}", 0, 2 ** 62)
    for key in FLOAT_META:
        if key in meta:
            check_number(meta[key], f"raytrace:{key}", lo=0.0, error=SceneError, file=path)
    _seeds(meta, path)


def _check(paths, renders):
    first_path, (first_layers, first) = paths[0], renders[0]
    seen = {}
    for path, (layers, meta) in zip(paths, renders):
        if "spp" not in meta or ("seed" not in meta and "seeds" not in meta):
            raise SceneError(None, "no raytrace:spp / raytrace:seed in its header (not a raytrace render?)",
                             file=path)
        _check_meta(path, meta)
        if "noise_threshold" in meta:
            raise SceneError(None, "is an adaptive render (raytrace:noise_threshold): its pixels hold "
                                   "different numbers of samples, which a merge by spp would weight wrongly; "
                                   "merge uniform renders", file=path)
        if "color" not in layers:
            raise SceneError(None, "has no colour channels (R, G, B)", file=path)
        for key in ("scene_hash",) + IMAGE_SETTINGS:
            if key in first and meta.get(key) != first[key]:
                what = "a different scene" if key == "scene_hash" else f"{key} {meta.get(key)!r}"
                raise SceneError(None, f"is a render of {what}, {first_path} of "
                                       f"{first[key] if key != 'scene_hash' else 'another'}: cannot merge",
                                 file=path)
        if layers["color"].shape != first_layers["color"].shape:
            raise SceneError(None, f"size {layers['color'].shape[1]} x {layers['color'].shape[0]} differs "
                                   f"from {first_path}'s", file=path)
        for seed in _seeds(meta, path):
            if seed in seen:
                raise SceneError(None, f"seed {seed} was also used by {seen[seed]}: the same samples would "
                                       "count twice (render with another --seed)", file=path)
            seen[seed] = path
        if set(layers) != set(first_layers):
            raise SceneError(None, f"has layers {sorted(layers)}, {first_path} {sorted(first_layers)}",
                             file=path)


def _merge_layers(renders, weights):
    w = np.asarray(weights, np.float64)
    total = w.sum()
    first = renders[0][0]
    merged = {}
    for name in first:
        arrays = [layers[name] for layers, _ in renders]
        if name in ID_LAYERS:
            if any(not np.array_equal(a, arrays[0]) for a in arrays[1:]):
                raise SceneError(None, f"the {name} layers differ: not renders of the same scene and camera")
            merged[name] = arrays[0]
        elif name == "samples":
            merged[name] = np.sum(arrays, axis=0).astype(np.int32)
        elif name == "variance":
            merged[name] = (sum(wi * wi * a.astype(np.float64) for wi, a in zip(w, arrays)) / total ** 2)
        elif name in HIT_AVERAGED and "depth" in first:
            hit = [np.isfinite(layers["depth"]) for layers, _ in renders]
            ws = [wi * (h[..., None] if a.ndim == 3 else h) for wi, h, a in zip(w, hit, arrays)]
            num = sum(wi * np.where(np.isfinite(a), a, 0.0) for wi, a in zip(ws, arrays))
            den = sum(ws)
            with np.errstate(invalid="ignore", divide="ignore"):
                merged[name] = np.where(den > 0, num / np.where(den > 0, den, 1.0),
                                        np.inf if name == "depth" else 0.0)
        else:
            merged[name] = sum(wi * a.astype(np.float64) for wi, a in zip(w, arrays)) / total
        if merged[name].dtype.kind == "f":
            merged[name] = merged[name].astype(np.float32)
    if "noisy" in merged:                       # denoised inputs: merge their raw colour
        merged["color"] = merged.pop("noisy")
    return merged


def merge_renders(paths):
    """Merge the EXR renders ``paths`` -> (layers, metadata) (see the module docs).
    SceneError naming the file for anything that cannot be merged."""
    if len(paths) < 2:
        raise SceneError(None, "merge needs at least two renders")
    renders = [read_render(p) for p in paths]
    _check([str(p) for p in paths], renders)
    weights = [int(meta["spp"]) for _, meta in renders]
    layers = _merge_layers(renders, weights)
    meta = dict(renders[0][1])
    for key in SUMMED_META:
        if all(key in m for _, m in renders):
            values = [m[key] for _, m in renders]
            meta[key] = sum(float(v) for v in values) if key in FLOAT_META else sum(int(v) for v in values)
    meta.pop("seed", None)
    meta["seeds"] = ",".join(str(s) for _, m in renders for s in _seeds(m))
    meta["merged_from"] = len(paths)
    meta["denoiser"] = "none"
    return layers, meta
