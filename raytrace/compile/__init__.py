"""How ``raytrace``'s kernels are compiled and cached: each function on its own.

- :mod:`.keys`: a kernel's cache key, from its own code and everything it can bake in
  (the functions it calls, in any file, and the constants it reads);
- :mod:`.cache`: Numba's on-disk cache looked up by that key (installed by
  ``raytrace._numba_setup`` before any kernel is decorated);
- :mod:`.plan`: which kernels an edit made stale, and why (what the compile notice says);
- :mod:`.errors`: a kernel's typing error as one short block naming the user's line.

Nothing here imports Numba at import time except through the functions that need it.
"""
