"""Everything about compiling raytrace's kernels, and nothing global.

- :mod:`.roles`: ``@helper``, ``@unit``, ``@row_kernel``, ``@kernel``: the only way a
  kernel is declared (each dispatcher gets its cache and pipeline here);
- :mod:`.keys`: a kernel's dependency key (its own code, its callees' in any file, the
  constants it reads, versions and :mod:`.modes`);
- :mod:`.cache`: one file per compiled kernel, named by its key, written whole, in
  private folders (:mod:`.folders`) checked before anything is loaded;
- :mod:`.inline`: the fast-inlining pipeline raytrace's dispatchers compile with;
- :mod:`.bundle`: the kernels shipped with the package (compiled for ``x86-64-v3``);
- :mod:`.plan`: which kernels an edit made stale, and why;
- :mod:`.late`: a row kernel's late twin, which calls the kernels below it through
  symbols bound at load, so that an edit below it compiles only the edited kernels;
- :mod:`.parallel`, :mod:`.warmup`: compiling ahead, in other processes (one warm-up
  for the CLI and the preview);
- :mod:`.notice`: what compiles and how long, on any stream;
- :mod:`.errors`: a kernel's typing error as one short block naming the user's line.

Nothing here changes ``numba.config``, Numba's classes or its default cache: the host
program's own ``@njit`` functions compile, target and cache as they would without
raytrace (``tests/test_jit_isolation.py``). Importing this package imports no Numba.
"""
from .roles import helper, kernel, row_kernel, unit

__all__ = ["helper", "unit", "row_kernel", "kernel"]
