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

from ..errors import SceneError
from ..image import read_pfm, to_8bit

VIDEO_FORMATS = {"gif": (".gif",), "mp4": (".mp4",)}


def check_mp4_size(width, height, option="--mp4"):
    """H.264 in the yuv420p pixel format (what players read) needs even sizes."""
    if width % 2 or height % 2:
        raise SceneError(option, f"an MP4 needs an even width and height, got {width} x {height} "
                         "(use --size)")


def read_frame(path):
    """A frame file -> (H, W, 3) uint8 (sRGB)."""
    suffix = pathlib.Path(path).suffix.lower()
    if suffix == ".png":
        import imageio.v3 as iio
        return np.asarray(iio.imread(path))[..., :3]
    if suffix == ".pfm":
        return to_8bit(read_pfm(path))
    from ..film.exr import read_exr
    return to_8bit(read_exr(path)[0]["color"])


def _staged(path):
    """A temporary path beside ``path`` with the same suffix (ffmpeg reads the format
    from it)."""
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    return tmp


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _commit(tmp, path):
    try:
        os.chmod(tmp, 0o666 & ~_umask())        # mkstemp made it 0600
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
    frames = [read_frame(f) for f in frame_files]
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
    try:
        writer = imageio_ffmpeg.write_frames(tmp, (w, h), fps=fps, codec="libx264",
                                             pix_fmt_out="yuv420p", macro_block_size=1,
                                             quality=8, ffmpeg_log_level="error")
        writer.send(None)
        for f in frame_files:
            writer.send(np.ascontiguousarray(read_frame(f)))
        writer.close()
    except BaseException:
        _remove(tmp)
        raise
    _commit(tmp, path)
