"""Faster ``inline="always"``: each inlined function's untyped IR is built once per process.

Why. Numba inlines an ``@njit(inline="always")`` function in its untyped pass
``InlineInlinables`` through ``InlineWorker.inline_function``
(``numba/core/inline_closurecall.py``), which, *at every call site*,

1. runs the callee's whole untyped pipeline again (that pipeline inlines the callee's own
   ``inline="always"`` callees, so a nested helper is rebuilt once per transitive call
   site, not once per function), and
2. deep-copies the result twice, block by block with a fresh memo per block, so each
   block copies the function's whole variable scope (time ~ blocks x variables).

The path tracer nests inline helpers five deep (``trace_path`` -> per-bounce helpers ->
BSDF / light / BVH routines), and these two steps took about half of a cold compile
(a profile of the Cornell box kernel: 78 s of 193 s in ``copy_ir``, 28 s re-running
pipelines). With this module alone that kernel's first compile went from 91 s to 64 s,
and the image stayed bit-identical.

What. raytrace's kernels are compiled by :class:`Pipeline` (each dispatcher names it as
its ``pipeline_class``, see ``raytrace.jit.roles``): Numba's nopython pipeline with its
inlining pass swapped for :class:`FastInlineInlinables`, whose :class:`FastInlineWorker`

1. keeps the callee's untyped IR, keyed by (function, target, flags, locals), for the
   life of the process, and runs the pipeline only on the first call;
2. copies that IR once per call site, all blocks in one ``deepcopy`` (one scope copy), and
   gives the copy a fresh ``FunctionIdentity`` (as a re-run would: inlined variable names
   stay unique per call site);
3. splices the copy into the caller exactly as ``InlineWorker.inline_ir`` does, minus its
   two defensive copies (the copy is ours to mutate).

It also keeps ``run_untyped_passes``'s side effect of setting the caller's
``flags.enable_ssa`` to ``False``, on cache hits too. The compiled code is the same
(variable numbering aside); the image regression tests run with it.

Nothing of Numba's is replaced: other code (the host program's own ``@njit`` functions)
keeps Numba's inliner; the pipeline only adds a pass class of its own to Numba's pass
registry.

Fence. Used only when the source of the Numba code it stands in for and copies from
(``InlineWorker.inline_function``, ``inline_ir``, ``run_untyped_passes``,
``InlineInlinables.run_pass``) hashes to a value checked here (:data:`KNOWN_SOURCES`);
any other Numba compiles raytrace's kernels with its own pipeline, and
:func:`pipeline_class` says why once (``RuntimeWarning``). ``RAYTRACE_FAST_INLINE=0``
turns it off. ``tests/test_numba_inline.py`` fails when it is not used on a checked
Numba, when it runs a pipeline more than once per function, when a nested inline tree
compiles to different results, or when a function outside raytrace uses it.
"""
import copy
import hashlib
import inspect
import warnings

from .modes import switch_on

# sha256 (first 16 hex) of inspect.getsource of InlineWorker.inline_function, .inline_ir,
# .run_untyped_passes and InlineInlinables.run_pass, joined by "\n", per Numba release checked.
KNOWN_SOURCES = {
    "d4c88503c0289cd7": "0.68",
}

_state = {"checked": False, "reason": None, "pipeline_runs": 0, "classes": None}
_cache = {}   # function -> {key: canonical untyped IR} (the IR refers to the function too)


def numba_source_digest():
    """The digest of the Numba code this module stands in for (see :data:`KNOWN_SOURCES`)."""
    from numba.core.inline_closurecall import InlineWorker
    from numba.core.untyped_passes import InlineInlinables
    parts = [inspect.getsource(getattr(InlineWorker, name))
             for name in ("inline_function", "inline_ir", "run_untyped_passes")]
    parts.append(inspect.getsource(InlineInlinables.run_pass))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def status():
    """``(used, reason)``: whether raytrace's kernels use the fast inliner, why not if not."""
    pipeline_class()
    return _state["reason"] is None, _state["reason"]


def pipeline_runs():
    """How many callee pipelines the fast inliner has run in this process (cache misses)."""
    return _state["pipeline_runs"]


def _flags_key(flags):
    """The compiler flags as a hashable key, without ``enable_ssa`` (the pipeline run sets
    it from its own argument, which is part of the key separately)."""
    values = []
    for name in sorted(getattr(type(flags), "options", {})):
        if name == "enable_ssa":
            continue
        value = getattr(flags, name, None)
        try:
            hash(value)
        except TypeError:
            value = repr(value)
        values.append((name, value))
    return tuple(values)


def _locals_key(local_types):
    try:
        return tuple(sorted(local_types.items()))
    except TypeError:
        return repr(local_types)


def _copy_ir(func_ir):
    """A copy of ``func_ir`` whose blocks, statements and scope may be mutated: one
    ``deepcopy`` of all blocks (so the scope they share is copied once), and a fresh
    ``FunctionIdentity`` (as a fresh pipeline run would give)."""
    new = func_ir.copy()
    new.blocks = copy.deepcopy(func_ir.blocks)
    new.block_entry_vars = {}
    new.func_id = func_ir.func_id.derive()
    return new


def _canonical_ir(worker, function, enable_ssa=False):
    """The callee's untyped IR, built by Numba's own ``run_untyped_passes`` on first use."""
    key = (id(worker.targetctx), enable_ssa, _flags_key(worker.flags),
           _locals_key(worker.locals))
    per_function = _cache.setdefault(function, {})
    found = per_function.get(key)
    if found is None:
        # Numba's own run_untyped_passes (the worker's pipeline is ours: the callee's nested
        # inline helpers are inlined by the fast inliner too)
        from numba.core.inline_closurecall import InlineWorker
        found = InlineWorker.run_untyped_passes(worker, function, enable_ssa=enable_ssa)
        _state["pipeline_runs"] += 1
        per_function[key] = found
    else:
        worker.flags.enable_ssa = enable_ssa     # as run_untyped_passes does
    return found


def _splice(worker, caller_ir, block, i, callee_ir, callee_freevars):
    """``InlineWorker.inline_ir`` (untyped case) on an IR that is ours to mutate."""
    from numba.core import inline_closurecall as icc
    from numba.core import ir, ir_utils

    if worker.validator is not None:
        worker.validator(callee_ir)
    scope = block.scope
    instr = block.body[i]
    call_expr = instr.value

    # 1. relabel the callee's blocks after the caller's
    max_label = max(ir_utils._the_max_label.next(), max(caller_ir.blocks.keys()))
    callee_blocks = icc.add_offset_to_labels(callee_ir.blocks, max_label + 1)
    callee_blocks = icc.simplify_CFG(callee_blocks)
    callee_ir.blocks = callee_blocks
    min_label = min(callee_blocks.keys())
    ir_utils._the_max_label.update(max(callee_blocks.keys()))

    # 2. rename the callee's locals into the caller's scope
    callee_scopes = icc._get_all_scopes(callee_blocks)
    assert len(callee_scopes) == 1
    callee_scope = callee_scopes[0]
    var_dict = {}
    for var in tuple(callee_scope.localvars._con.values()):
        if var.name not in callee_freevars:
            inlined_name = icc._created_inlined_var_name(callee_ir.func_id.unique_name,
                                                         var.name)
            new_var = scope.redefine(inlined_name, loc=var.loc)
            callee_scope.redefine(inlined_name, loc=var.loc)
            var_dict[var.name] = new_var
    icc.replace_vars(callee_blocks, var_dict)

    # 3. formal parameters -> actual arguments
    args = icc._get_callee_args(call_expr, callee_ir.func_id.func, block.body[i].loc,
                                caller_ir)
    icc._replace_args_with(callee_blocks, args)

    # 4. split the caller's block at the call
    new_blocks = []
    new_block = ir.Block(scope, block.loc)
    new_block.body = block.body[i + 1:]
    new_label = icc.next_label()
    caller_ir.blocks[new_label] = new_block
    new_blocks.append((new_label, new_block))
    block.body = block.body[:i]
    block.body.append(ir.Jump(min_label, instr.loc))

    # 5. returns -> assignments to the call's target
    topo_order = icc.find_topo_order(callee_blocks)
    icc._replace_returns(callee_blocks, instr.target, new_label)
    if (instr.target.name in caller_ir._definitions
            and call_expr in caller_ir._definitions[instr.target.name]):
        caller_ir._definitions[instr.target.name].remove(call_expr)

    # 6. insert the callee's blocks
    for label in topo_order:
        callee_block = callee_blocks[label]
        callee_block.scope = scope
        icc._add_definitions(caller_ir, callee_block)
        caller_ir.blocks[label] = callee_block
        new_blocks.append((label, callee_block))
    return callee_blocks, var_dict, new_blocks


def _swap_pass(pm, fast):
    """Put ``fast`` where Numba's ``InlineInlinables`` is in pass manager ``pm``."""
    from numba.core.untyped_passes import InlineInlinables
    pm.passes = [(fast if cls is InlineInlinables else cls, desc) for cls, desc in pm.passes]
    pm.finalize()
    return pm


def _make_classes():
    """The worker, pass and pipeline classes (built on first use: they subclass Numba's)."""
    from numba.core import ir, postproc
    from numba.core.analysis import compute_cfg_from_blocks
    from numba.core.compiler import CompilerBase, DefaultPassBuilder
    from numba.core.compiler_machinery import register_pass
    from numba.core.inline_closurecall import InlineWorker, callee_ir_validator
    from numba.core.ir_utils import guard, simplify_CFG
    from numba.core.untyped_passes import InlineInlinables

    class FastInlineWorker(InlineWorker):
        """Numba's worker, with the callee's IR built once and copied once per call site."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._compiler_pipeline = lambda state: _swap_pass(
                DefaultPassBuilder.define_untyped_pipeline(state), FastInlineInlinables)

        def inline_function(self, caller_ir, block, i, function, arg_typs=None):
            if arg_typs is not None or self._permit_update_type_and_call_maps:
                # the typed variant is not used by Numba's passes; keep Numba's own for it
                return super().inline_function(caller_ir, block, i, function, arg_typs=arg_typs)
            canonical = _canonical_ir(self, function)
            callee_ir = _copy_ir(canonical)
            callee_blocks, var_dict, new_blocks = _splice(self, caller_ir, block, i, callee_ir,
                                                          function.__code__.co_freevars)
            return canonical, callee_blocks, var_dict, new_blocks

    @register_pass(mutates_CFG=True, analysis_only=False)
    class FastInlineInlinables(InlineInlinables):
        """``InlineInlinables`` with :class:`FastInlineWorker` (its ``run_pass``, as Numba
        writes it, with the worker class changed)."""
        _name = "raytrace_fast_inline_inlinables"

        def run_pass(self, state):
            worker = FastInlineWorker(state.typingctx, state.targetctx, state.locals,
                                      state.pipeline, state.flags, validator=callee_ir_validator)
            modified = False
            work_list = list(state.func_ir.blocks.items())
            while work_list:
                label, block = work_list.pop()
                for i, instr in enumerate(block.body):
                    if isinstance(instr, ir.Assign):
                        expr = instr.value
                        if isinstance(expr, ir.Expr) and expr.op == "call":
                            if guard(self._do_work, state, work_list, block, i, expr, worker):
                                modified = True
                                break  # because block structure changed
            if modified:
                cfg = compute_cfg_from_blocks(state.func_ir.blocks)
                for dead in cfg.dead_nodes():
                    del state.func_ir.blocks[dead]
                postproc.PostProcessor(state.func_ir).run()
                state.func_ir.blocks = simplify_CFG(state.func_ir.blocks)
            return True

    from . import late
    lowering_pass = late.lowering_pass()

    class Pipeline(CompilerBase):
        """Numba's nopython pipeline with :class:`FastInlineInlinables` and, where
        ``raytrace.jit.late`` can make it, its lowering pass (which adds each kernel's
        entry for late twins)."""

        def define_pipelines(self):
            pm = _swap_pass(DefaultPassBuilder.define_nopython_pipeline(self.state), FastInlineInlinables)
            if lowering_pass is not None:
                from numba.core.typed_passes import NativeLowering
                pm.passes = [(lowering_pass if cls is NativeLowering else cls, desc) for cls, desc in pm.passes]
                pm.finalize()
            return [pm]

    return Pipeline


def pipeline_class():
    """The compiler class for raytrace's dispatchers: :class:`Pipeline`, or None (Numba's
    own) when switched off or on a Numba whose code was not checked (said once)."""
    if not _state["checked"]:
        _state["checked"] = True
        if not switch_on("RAYTRACE_FAST_INLINE"):
            _state["reason"] = "RAYTRACE_FAST_INLINE=0"
            return None
        try:
            digest = numba_source_digest()
            if digest not in KNOWN_SOURCES:
                _state["reason"] = f"Numba's inliner differs from the versions checked (source digest {digest})"
            else:
                _state["classes"] = _make_classes()
        except Exception as exc:  # noqa: BLE001 - any failure means: Numba's own pipeline
            _state["reason"] = f"cannot set up the fast inliner ({type(exc).__name__}: {exc})"
        if _state["reason"] is not None and _state["reason"] != "RAYTRACE_FAST_INLINE=0":
            warnings.warn(f"raytrace: fast inlining not used, first compiles are slower: "
                          f"{_state['reason']}", RuntimeWarning, stacklevel=3)
    return _state["classes"]
