"""How a kernel function is declared: by its role, never by hand-written Numba options.

=================  ===========================================  ==========================
role               Numba options                                what it is
=================  ===========================================  ==========================
``@helper``        ``inline="always"``                          a small function Numba
                                                                inlines into its callers'
                                                                IR (never compiled alone)
``@unit``          ``forceinline=True, error_model="numpy"``    a compile unit: typed,
                                                                compiled and cached on its
                                                                own, inlined by LLVM
``@row_kernel``    ``nogil=True, error_model="numpy"``          an integrator's entry: a
                                                                band of image rows, called
                                                                from Python threads
``@kernel``        none (``parallel``, ``nogil``,               a function compiled and
                   ``error_model`` may be asked for)            called on its own (a BVH
                                                                builder, a filter, a leaf
                                                                such as ``ggx_d``)
=================  ===========================================  ==========================

``@helper(error_model="numpy")`` keeps NumPy's division semantics where a helper is
also called on its own. Every role compiles with the fast-inlining pipeline
(``raytrace.jit.inline``) and caches through its own dispatcher's
:class:`~raytrace.jit.cache.KernelCache`: declaring a kernel changes nothing of Numba's
for anyone else. ``tests/test_structure.py`` checks that no module of the package calls
``njit`` itself.
"""
import functools


def declare(py_func, options):
    """``py_func`` jitted with ``options`` (a role's, or a dispatcher's ``targetoptions``),
    the fast-inlining pipeline and its own :class:`~raytrace.jit.cache.KernelCache`."""
    from numba import njit

    from . import cache, inline
    pipeline = inline.pipeline_class()
    if pipeline is not None:
        options = dict(options, pipeline_class=pipeline)
    return cache.attach(njit(**options)(py_func))


def _role(options, allowed=()):
    def decorator(py_func=None, **asked):
        unknown = set(asked) - set(allowed)
        if unknown:
            raise TypeError(f"options not allowed for this role: {sorted(unknown)}")
        chosen = dict(options, **{k: v for k, v in asked.items() if v is not None})
        if py_func is None:
            return functools.partial(decorator, **asked)
        return declare(py_func, chosen)
    return decorator


helper = _role({"inline": "always"}, allowed=("error_model",))
unit = _role({"forceinline": True, "error_model": "numpy"})
row_kernel = _role({"nogil": True, "error_model": "numpy"})
kernel = _role({}, allowed=("parallel", "nogil", "error_model"))
