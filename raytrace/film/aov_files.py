"""Where a render's colour and AOVs go: one multi-layer EXR, or one file per AOV.

- ``-o NAME.exr``: one OpenEXR file holding the colour (``R, G, B``) and every requested
  AOV as a layer (:data:`EXR_COMPONENTS` names the channels: ``albedo.R/G/B``,
  ``normal.X/Y/Z``, ``depth.Z``, ``position.X/Y/Z``, ``uv.U/V``, ``object_id.V``,
  ``material_id.V``, ``samples.V``; a denoised render adds its raw colour as
  ``noisy.R/G/B`` and the variance of each pixel's mean as ``variance.R/G/B``, what
  ``raytrace merge`` needs to combine and denoise again).
- ``-o NAME.png`` or ``NAME.pfm``, or ``--aov-files``: one file per AOV beside the
  colour, ``NAME.<aov>.exr`` (``NAME.<aov>.pfm`` next to a PFM). AOVs are data, never
  8-bit: a PNG colour image gets EXR AOV files.

Values are linear and unscaled: depth in scene units along the camera ray (inf where
nothing was hit), position in world space, normals unit vectors (zero on a miss).
Ids are stored **plus one**, so that 0 means "nothing": EXR ``UINT`` channels (exact),
PFM floats (exact below 2^24); :func:`read_render` gives back the API's int32 ids (-1
for nothing). ``samples`` is EXR ``UINT`` / PFM float. ``half=True`` stores the float
channels as float16 (ids and sample counts stay exact); depth and position then keep
about three significant digits.

The header (:func:`render_metadata`) records how the image was made (``raytrace:spp``,
``raytrace:seed``, the settings, a hash of the scene, the object and material names),
which ``raytrace merge`` checks and uses, and how long it took: ``raytrace:seconds`` of
rendering and, apart, ``raytrace:compile_seconds`` spent compiling kernels during the
render (a first run; 0 when they came from the cache).
"""
import dataclasses
import hashlib
import json
import pathlib

import numpy as np

from ..errors import SceneError
from ..image import encode_image, pfm_bytes
from ..layout import AOVS
from .exr import exr_bytes, read_exr

EXR_COMPONENTS = {"albedo": "RGB", "normal": "XYZ", "depth": "Z", "position": "XYZ", "uv": "UV",
                  "object_id": "V", "material_id": "V", "samples": "V", "noisy": "RGB",
                  "variance": "RGB"}
ID_LAYERS = ("object_id", "material_id")
COUNT_LAYERS = ("samples",)
# settings that change the picture: renders merged together must agree on them
IMAGE_SETTINGS = ("integrator", "width", "height", "filter", "epsilon", "bounces", "shadows",
                  "max_depth", "rr_depth", "sampler")


def parse_aov_list(text):
    """``"albedo,normal"`` -> ("albedo", "normal"); SceneError at ``--aov`` otherwise."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    if not names:
        raise SceneError("--aov", f"needs a comma-separated list of: {', '.join(AOVS)}")
    bad = [n for n in names if n not in AOVS]
    if bad:
        raise SceneError("--aov", f"unknown AOV {bad[0]!r} (known: {', '.join(AOVS)})")
    return names


def aov_path(output, name):
    """The file of AOV ``name`` beside the colour image ``output``: ``NAME.<aov>.pfm``
    next to a PFM, else ``NAME.<aov>.exr``."""
    out = pathlib.Path(output)
    suffix = ".pfm" if out.suffix.lower() == ".pfm" else ".exr"
    return str(out.with_name(f"{out.stem}.{name}{suffix}"))


def in_layers(output, separate):
    """Whether the AOVs go into the colour file as layers (an EXR, not ``--aov-files``)."""
    return pathlib.Path(output).suffix.lower() == ".exr" and not separate


def plan_outputs(outputs, output, names, separate=False):
    """Declare the AOV files of a render in ``outputs`` (checked now) -> {aov: path}, empty
    when the AOVs are layers of ``output``."""
    if in_layers(output, separate):
        return {}
    return {name: outputs.add(aov_path(output, name), "--aov", (".exr", ".pfm"), "AOV file")
            for name in names}


def scene_hash(scene):
    """A short hash of the scene description (which file it came from does not matter)."""
    text = json.dumps(scene.data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def render_metadata(image, scene=None, settings=None, denoiser=None):
    """Header attributes for ``image``'s files: its ``info`` (from :func:`raytrace.render`:
    ``seconds`` of rendering and, apart, ``compile_seconds``), the picture-changing
    ``settings``, the scene's name, hash and object/material names, the denoiser."""
    meta = dataclasses.asdict(image.info) if getattr(image, "info", None) is not None else {}
    for key in IMAGE_SETTINGS:
        if settings is not None and key in settings:
            meta[key] = settings[key]
    if settings is not None and settings.get("noise_threshold") is not None:
        for key in ("noise_threshold", "min_spp", "max_spp"):      # adaptive sampling
            meta[key] = settings[key]
    if scene is not None:
        meta["scene"] = pathlib.Path(scene.name).name
        meta["scene_hash"] = scene_hash(scene)
        if any(name in getattr(image, "aovs", {}) for name in ID_LAYERS):
            meta["object_names"] = json.dumps(scene.object_names)
            meta["material_names"] = json.dumps(scene.material_names)
            meta["ids"] = "stored as id + 1; 0 = nothing"
    meta["denoiser"] = denoiser or "none"
    return meta


def _file_array(name, array, float_file):
    """An AOV as stored: ids + 1; counts unsigned (EXR) or float (PFM); uv padded to 3
    channels in a PFM."""
    a = np.asarray(array)
    if name in ID_LAYERS:
        a = a.astype(np.int64) + 1
        return a.astype(np.float32) if float_file else a.astype(np.uint32)
    if name in COUNT_LAYERS:
        return a.astype(np.float32) if float_file else a.astype(np.uint32)
    if float_file and a.ndim == 3 and a.shape[2] == 2:
        return np.concatenate([a, np.zeros_like(a[..., :1])], axis=2)
    return a


def exr_layers(image, aovs, extra=None):
    """Layer dict of a multi-layer EXR: colour, the AOVs as stored, ``extra`` layers (a
    denoised render's ``noisy`` and ``variance``)."""
    layers = {"color": np.asarray(image, np.float32)}
    for name, array in aovs.items():
        layers[name] = _file_array(name, array, False)
    for name, array in (extra or {}).items():
        layers[name] = np.asarray(array, np.float32)
    return layers


def encode_color(path, image, metadata, half=False, encoding="srgb", aovs=None, extra=None):
    """The bytes of the colour file ``path``: a (multi-layer) EXR with ``metadata``, or PNG /
    PFM as :func:`raytrace.image.encode_image` makes them (no layers)."""
    if pathlib.Path(path).suffix.lower() == ".exr":
        return exr_bytes(exr_layers(image, aovs or {}, extra), half=half, metadata=metadata,
                         components=EXR_COMPONENTS)
    return encode_image(path, np.asarray(image), encoding)


def encode_aov(path, name, array, metadata, half=False):
    """The bytes of the file of one AOV (``.exr`` or ``.pfm``)."""
    if pathlib.Path(path).suffix.lower() == ".pfm":
        return pfm_bytes(_file_array(name, array, True))
    return exr_bytes({name: _file_array(name, array, False)}, half=half, metadata=metadata,
                     components=EXR_COMPONENTS)


def set_outputs(outputs, output, plan, image, metadata, half=False, encoding="srgb", extra=None):
    """Give ``outputs`` the bytes of the colour file (with the AOVs as layers unless
    ``plan`` gives them files, and ``extra`` layers) and of every planned AOV file."""
    aovs = getattr(image, "aovs", {}) or {}
    outputs.set(output, encode_color(output, image, metadata, half, encoding, {} if plan else aovs, extra))
    for name, path in plan.items():
        outputs.set(path, encode_aov(path, name, aovs[name], metadata, half))


def write_exr(path, image, scene=None, half=False):
    """Write ``image`` (a :class:`~raytrace.image.RenderedImage`) and its ``aovs`` to one
    multi-layer EXR file, atomically, with the header :func:`render_metadata` makes
    (``scene``: the scene it is a render of, for its name, hash and object names)."""
    from userio.outputs import write_bytes_atomic
    if pathlib.Path(path).suffix.lower() != ".exr":
        raise ValueError(f"write_exr writes .exr files, not {path!r}")
    meta = render_metadata(image, scene)
    write_bytes_atomic(path, encode_color(path, image, meta, half, aovs=getattr(image, "aovs", {})))


def read_render(path, error=None):
    """An EXR written by raytrace -> (layers, metadata) with the API's conventions: int32
    ids with -1 for nothing, int32 sample counts, float32 elsewhere."""
    layers, meta = read_exr(path, error)
    for name in ID_LAYERS:
        if name in layers:
            layers[name] = (layers[name].astype(np.int64) - 1).astype(np.int32)
    for name in COUNT_LAYERS:
        if name in layers:
            layers[name] = layers[name].astype(np.int32)
    for name, array in layers.items():
        if array.dtype.kind == "f":
            layers[name] = array.astype(np.float32)
    return layers, meta
