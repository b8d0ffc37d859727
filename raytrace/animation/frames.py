"""Frame files: their names, which exist, the ``A:B[:STEP]`` selection, the run's summary.

Frames are written as ``OUT_DIR/frame_0000.png`` (at least four digits, more when the
animation has more frames), each to a temporary name in the same folder and then
renamed: a frame file either does not exist or is complete. A rerun skips the frames
that exist (unless forced).
"""
import dataclasses
import pathlib

from ..errors import SceneError

PREFIX = "frame_"
FRAME_FORMATS = (".png", ".pfm", ".exr")


def parse_frames(text, count, option="--frames"):
    """Frame numbers from ``A:B[:STEP]`` (Python slice rules over 0 .. count - 1: B is
    exclusive, negative numbers count from the end, parts may be empty) or one number
    ``A``. Raises SceneError naming ``option`` for anything else or an empty selection."""
    parts = str(text).split(":")
    try:
        if len(parts) > 3:
            raise ValueError
        nums = [int(p) if p.strip() or len(parts) == 1 else None for p in parts]
    except ValueError:
        raise SceneError(option, f"expected A:B[:STEP] or A (whole numbers), got {text!r}") from None
    if len(nums) == 1:
        if not -count <= nums[0] < count:
            raise SceneError(option, f"frame {text} is outside 0 .. {count - 1}")
        return [range(count)[nums[0]]]
    if len(nums) == 3 and nums[2] is not None and nums[2] <= 0:
        raise SceneError(option, f"STEP must be > 0, got {nums[2]}")
    picked = list(range(count)[slice(*nums)])
    if not picked:
        raise SceneError(option, f"{text!r} selects no frame of 0 .. {count - 1}")
    return picked


def frame_name(k, count, suffix):
    """``frame_0007.png`` for frame 7 (digits: at least 4, enough for ``count`` frames)."""
    digits = max(4, len(str(max(count - 1, 0))))
    return f"{PREFIX}{k:0{digits}d}{suffix}"


def frame_paths(out_dir, frames, count, suffix):
    """{frame number: path} of ``frames`` in ``out_dir``."""
    out = pathlib.Path(out_dir)
    return {k: out / frame_name(k, count, suffix) for k in frames}


def check_out_dir(out_dir, option="-o"):
    """Create ``out_dir`` if needed; SceneError (bad input) when it cannot be a folder of
    frames, OSError when it cannot be created."""
    out = pathlib.Path(out_dir)
    if out.exists() and not out.is_dir():
        raise SceneError(option, "is a file, not a folder", file=str(out))
    out.mkdir(parents=True, exist_ok=True)
    return out


@dataclasses.dataclass
class Summary:
    """What a run did: frame numbers ``rendered`` and ``skipped`` (existed already),
    ``failed`` {frame: error text}, ``paths`` {frame: file} of the whole selection,
    ``videos`` written, ``seconds`` of wall time, ``nonfinite`` samples dropped as NaN or
    infinite (0 expected)."""
    rendered: list
    skipped: list
    failed: dict
    paths: dict
    videos: list
    seconds: float
    nonfinite: int = 0

    @property
    def ok(self):
        return not self.failed

    def lines(self):
        """The summary as text lines (one per failed frame after the totals)."""
        total = len(self.paths)
        head = (f"frames: {len(self.rendered)} rendered, {len(self.skipped)} skipped (already there), "
                f"{len(self.failed)} failed, of {total}, in {self.seconds:.1f} s")
        out = [head]
        for k, error in sorted(self.failed.items()):
            out.append(f"frame {k} failed: {error}")
        return out
