"""GIF and MP4 files from the frame files (imageio; MP4 through the ffmpeg binary that
the ``imageio-ffmpeg`` wheel ships).

Frames are read back from disk in order (PNG as stored; PFM and EXR frames are
sRGB-encoded to 8 bits first), so a video can be made from a run that was interrupted
and completed later. Each video is written to a temporary name beside its target and
renamed when complete, with the mode every other output gets (``0666`` less the umask,
as ``userio.outputs`` gives them; the temporary file is created ``0600``).
"""
import os
import pathlib
import tempfile

import numpy as np
from userio.outputs import output_mode

from ..errors import SceneError
from ..image import _short_reason, read_pfm, to_8bit

VIDEO_FORMATS = {"gif": (".gif",), "mp4": (".mp4",)}


def check_mp4_size(width, height, option="--mp4"):
    """H.264 in the yuv420p pixel format (what players read) needs even sizes."""
    if width % 2 or height % 2:
        raise SceneError(option, f"an MP4 needs an even width and height, got {width} x {height} "
                         "(use --size)")


def _read_png(path):
    """An 8-bit PNG frame -> (H, W, 3) uint8; its declared size is checked first."""
    import warnings

    import imageio.v3 as iio
    import PIL.Image
    from userio.limits import check_image_size
    try:
        with warnings.catch_warnings():          # the size is checked below, before decoding
            warnings.simplefilter("ignore", PIL.Image.DecompressionBombWarning)
            props = iio.improps(path, plugin="pillow")
            shape = tuple(props.shape)
            if len(shape) < 2 or 0 in shape[:2]:
                raise SceneError(None, f"not a frame image (shape {shape})", file=str(path))
            check_image_size(shape[1], shape[0], "the frame", None, bytes_per_pixel=8, error=SceneError,
                             file=str(path))
            img = np.asarray(iio.imread(path, plugin="pillow"))
    except SceneError:
        raise
    except Exception as exc:  # imageio / Pillow raise many types for broken files
        raise SceneError(None, f"cannot read this frame: {_short_reason(exc)} (delete it, or render "
                         "again with --force)", file=str(path)) from None
    if img.dtype != np.uint8:
        raise SceneError(None, f"frame has {img.dtype} pixels, not 8-bit (render again with --force)",
                         file=str(path))
    if img.ndim == 2:
        img = img[..., None]
    if img.shape[2] in (1, 2):
        img = np.repeat(img[..., :1], 3, axis=2)
    return np.ascontiguousarray(img[..., :3])


def read_frame(path, like=None):
    """A frame file -> (H, W, 3) uint8 (sRGB). ``like``: (path, shape) of the video's first
    frame, whose size this frame must have. SceneError naming the file for an unreadable
    frame, one over :data:`userio.limits.MAX_IMAGE_PIXELS` or of another size."""
    suffix = pathlib.Path(path).suffix.lower()
    if suffix == ".png":
        frame = _read_png(path)
    elif suffix == ".pfm":
        frame = to_8bit(read_pfm(path))
    else:
        from ..film.exr import read_exr
        layers = read_exr(path)[0]
        if "color" not in layers or np.ndim(layers["color"]) != 3:
            raise SceneError(None, "frame has no colour channels (R, G, B)", file=str(path))
        frame = to_8bit(layers["color"])
    if like is not None and frame.shape != like[1]:
        h, w = frame.shape[:2]
        raise SceneError(None, f"frame is {w} x {h} pixels, {pathlib.Path(like[0]).name} is "
                         f"{like[1][1]} x {like[1][0]}: a video needs frames of one size (render again "
                         "with --force)", file=str(path))
    return frame


def _staged(path):
    """A temporary path beside ``path`` with the same suffix (ffmpeg reads the format
    from it)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    return tmp


def _commit(tmp, path):
    try:
        os.chmod(tmp, output_mode())            # mkstemp made it 0600
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _remove(tmp):
    try:
        os.unlink(tmp)
    except OSError:
        pass


def write_gif(path, frame_files, fps):
    """An endlessly looping GIF at ``fps`` frames per second (GIF stores delays in
    hundredths of a second: rounded)."""
    import imageio.v3 as iio
    first = read_frame(frame_files[0])
    frames = [first] + [read_frame(f, (frame_files[0], first.shape)) for f in frame_files[1:]]
    tmp = _staged(path)
    try:
        iio.imwrite(tmp, np.stack(frames), extension=".gif", duration=1000.0 / fps, loop=0)
    except BaseException:
        _remove(tmp)
        raise
    _commit(tmp, path)


def write_mp4(path, frame_files, fps):
    """An H.264 MP4 (yuv420p) at ``fps`` frames per second."""
    import imageio_ffmpeg
    first = read_frame(frame_files[0])
    h, w = first.shape[:2]
    tmp = _staged(path)
    writer = None
    try:
        writer = imageio_ffmpeg.write_frames(tmp, (w, h), fps=fps, codec="libx264",
                                             pix_fmt_out="yuv420p", macro_block_size=1,
                                             quality=8, ffmpeg_log_level="error")
        writer.send(None)
        for f in frame_files:
            writer.send(np.ascontiguousarray(read_frame(f, (frame_files[0], first.shape))))
        writer.close()
    except BaseException:
        if writer is not None:
            writer.close()                      # stops ffmpeg
        _remove(tmp)
        raise
    _commit(tmp, path)
