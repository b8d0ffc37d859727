"""Package attributes imported on first use, so that a command line's ``--help`` and
argument errors never pay for Numba or the kernels.

    lazy_package(__name__, {
        "render": (".renderer", "render"),      # public name -> (module, attribute)
        "basis": (".basis", None),              # None: the module itself
    })

The first ``package.render`` imports ``package.renderer`` and keeps the value in the
package's namespace, so later look-ups are plain attribute reads. Submodules not named in
the table load on first use too (``raytrace.scene`` after ``import raytrace``).

A public name may equal its module's name (``particles.simulate`` is the function
``simulate`` of the module ``particles.simulate``): importing that submodule makes
Python bind the module to the package's attribute, which an eager ``from .simulate
import simulate`` in ``__init__`` would have overwritten right after. The package's
class therefore binds the attribute the table names instead, so the package means the
same thing whatever was imported first.
"""
import importlib
import importlib.util
import sys
import types


def lazy_package(package, table):
    """Make the attributes of ``table`` of the (already imported) module ``package`` load
    on first use."""

    class LazyPackage(types.ModuleType):
        def __getattr__(self, name):
            if name not in table:
                # a submodule not imported yet (``raytrace.scene``), as an eager package had it
                if not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
                    return importlib.import_module(f"{package}.{name}")
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            module_name, attribute = table[name]
            value = importlib.import_module(module_name, package)   # may bind via __setattr__
            if attribute is not None:
                value = getattr(value, attribute)
            super().__setattr__(name, value)
            return value

        def __setattr__(self, name, value):
            entry = table.get(name)
            if (entry is not None and entry[1] is not None and isinstance(value, types.ModuleType)
                    and value.__name__ == importlib.util.resolve_name(entry[0], package)):
                value = getattr(value, entry[1])      # the submodule's public function, not it
            super().__setattr__(name, value)

        def __dir__(self):
            return sorted(set(super().__dir__()) | set(table))

    sys.modules[package].__class__ = LazyPackage
