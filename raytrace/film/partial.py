"""Partial images of a long path-traced render (``raytrace render --write-partial SECONDS``).

The renderer calls a :class:`PartialWriter` with the image of the passes done so far
(at most every SECONDS seconds, between passes); it replaces the output file atomically
(a temporary file in the same folder, then a rename), so the file on disk is always a
complete image: the previous partial one until the new one is in place. An EXR partial
image carries its ``spp`` and ``seed`` in the header, so it can be merged with other
renders (``raytrace merge``) if the render never finishes. Partial images hold the
colour only, not denoised; the AOVs and the denoised colour come with the final image.

A failed write (a full disk) is reported once on stderr and the render goes on: the
final image is written as usual, or fails then.
"""
import sys

from userio.outputs import write_bytes_atomic


class PartialWriter:
    """``writer(image)``: encode ``image`` with ``encode(image) -> bytes`` and replace
    ``path`` with it. ``written``: how many partial images were written, ``spp``: the
    samples per pixel of the last one."""

    def __init__(self, path, encode, prog="raytrace", stream=None):
        self.path = path
        self.encode = encode
        self.prog = prog
        self.stream = stream
        self.written = 0
        self.spp = 0
        self._warned = False

    def __call__(self, image):
        try:
            write_bytes_atomic(self.path, self.encode(image))
        except OSError as exc:
            if not self._warned:
                reason = exc.strerror or str(exc)
                print(f"{self.prog}: warning: cannot write the partial image {self.path}: {reason}; "
                      "rendering on", file=self.stream or sys.stderr)
                self._warned = True
            return
        self.written += 1
        self.spp = image.info.spp
