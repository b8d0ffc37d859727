"""Animated scenes and render farms.

- :mod:`.timeline`: keyframe tracks (linear, smooth step, Catmull-Rom; quaternion slerp);
- :mod:`.tracks`: the scene's ``animation`` section evaluated at a time;
- :mod:`.scene_at`: :class:`AnimatedScene` and :func:`scene_at`, the static scene at any time;
- :mod:`.motion_blur`: :func:`render_at`, a frame averaged over its shutter, one time per pass;
- :mod:`.cloth`: cloth simulated once over the whole range, cached on disk;
- :mod:`.tiles`: bands of rows of a frame, bit-identical to the whole render;
- :mod:`.farm`: :func:`animate`, frames in this process or as Dask tasks;
- :mod:`.frames`, :mod:`.video`: frame files and the run's summary; GIF and MP4;
- :mod:`.cli`: the ``raytrace animate`` command.

See docs/animation.md and docs/render-farm.md.
"""
from userio.lazy import lazy_package as _lazy_package

# imported on first use: ``raytrace animate --help`` stays light (userio.lazy)
_lazy_package(__name__, {
    "animate": (".farm", "animate"),
    "render_at": (".motion_blur", "render_at"),
    "AnimatedScene": (".scene_at", "AnimatedScene"),
    "scene_at": (".scene_at", "scene_at"),
})

__all__ = ["AnimatedScene", "animate", "render_at", "scene_at"]
