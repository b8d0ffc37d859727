"""The preview's kernel code: which source files it watches, and loading them afresh.

``raytrace view`` watches the package's own sources as it watches a scene's files
(:func:`sources`: every module a render runs, kernels and the Python around them). After
an edit, :func:`unload` drops those modules from ``sys.modules``, so that the next load of
the scene imports the edited code; kernels are then found in the cache by their
dependency keys (``raytrace/jit/``), computed from the function objects just loaded, so
an edit compiles what it touched (in any file), an undo compiles nothing, and no kernel
is stale. The modules that hold the process's own state stay loaded (:data:`KEPT`): the
package itself, the JIT layer (its cache folder and pipeline, set up once per process),
the preview's server and session, and the error types the page's messages
are made of. Editing one of those needs the viewer started again, which
:func:`restart_needed` says.
"""
import pathlib
import sys
import types

PACKAGE = "raytrace"
# modules never unloaded: process-wide set-up, the preview itself, shared error types
KEPT = ("raytrace", "raytrace.jit", "raytrace.view", "raytrace.errors", "raytrace.__main__", "raytrace.cli")


def _kept(name):
    return any(name == k or name.startswith(k + ".") for k in KEPT if k != PACKAGE) or name == PACKAGE


def package_dir():
    return pathlib.Path(sys.modules[PACKAGE].__file__).resolve().parent


def sources():
    """The ``.py`` files of the package whose edits the preview loads afresh."""
    root = package_dir()
    out = []
    for path in sorted(root.rglob("*.py")):
        name = ".".join((PACKAGE,) + path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        if not _kept(name):
            out.append(path)
    return out


def watched():
    """Every ``.py`` file of the package: those :func:`sources` loads afresh, and those
    only a restart loads (:func:`restart_needed` names them when they change)."""
    return sorted(package_dir().rglob("*.py"))


def shown(path):
    """``raytrace/kernels/bsdf.py``: a source file as the user knows it."""
    try:
        return pathlib.Path(path).resolve().relative_to(package_dir().parent).as_posix()
    except ValueError:
        return str(path)


def restart_needed(paths):
    """The edited files (of ``paths``) that only a restart of the viewer loads."""
    root = package_dir()
    out = []
    for path in paths:
        try:
            rel = pathlib.Path(path).resolve().relative_to(root)
        except ValueError:
            continue
        name = ".".join((PACKAGE,) + rel.with_suffix("").parts).removesuffix(".__init__")
        if name != PACKAGE and _kept(name) and rel.suffix == ".py":
            out.append(path)
    return out


def unload():
    """Drop every loaded module of the package that is not :data:`KEPT` (and the package
    attributes bound to them), so that the next import runs the code as it is now.
    Returns the names dropped."""
    dropped = sorted(name for name in list(sys.modules)
                     if (name == PACKAGE or name.startswith(PACKAGE + ".")) and not _kept(name))
    gone = set(dropped)
    for name in dropped:
        del sys.modules[name]
    for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
        module = sys.modules[name]
        for attr, value in list(vars(module).items()):
            owner = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
            if owner in gone:
                try:
                    delattr(module, attr)        # a lazily bound name (raytrace.render) or a submodule
                except AttributeError:
                    pass
    return dropped


def syntax_error_text(exc):
    """``raytrace/kernels/bsdf.py, line 12: invalid syntax`` for a SyntaxError in the
    package's code (None for anything else)."""
    if not isinstance(exc, SyntaxError) or not exc.filename:
        return None
    try:
        rel = pathlib.Path(exc.filename).resolve().relative_to(package_dir().parent)
    except ValueError:
        return None
    code = (exc.text or "").strip()
    return f"{rel}, line {exc.lineno}: {exc.msg}" + (f"\n    {code}" if code else "")
