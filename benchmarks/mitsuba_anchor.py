"""The edit loop's anchor: Mitsuba 3 with a BSDF written in Python, edited, next image.

    python benchmarks/mitsuba_anchor.py OUT.png [VARIANT] [EDIT]

A diffuse BSDF written in Python (a subclass of ``mi.BSDF``) on the Cornell box's white
walls, 64 x 64 pixels, 4 samples per pixel: what a Mitsuba user does to try a BSDF edit.
``EDIT`` (a number that differs from run to run) enters the albedo, so nothing of an
earlier run can be reused. ``benchmarks/bench_edit_loop.py`` times the whole process in
the same sitting as our own edit rows (the issue's targets are ratios against it). The
variant defaults to ``scalar_rgb`` (the BSDF runs in Python per sample); ``llvm_ad_rgb``
traces it into a kernel instead.
"""
import sys
import drjit as dr
import mitsuba as mi

variant = sys.argv[2] if len(sys.argv) > 2 else "scalar_rgb"
mi.set_variant(variant if variant in mi.variants() else "scalar_rgb")
EDIT = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0      # the "edit": a value that differs each run


class PythonDiffuse(mi.BSDF):
    def __init__(self, props):
        mi.BSDF.__init__(self, props)
        self.albedo = mi.Color3f(0.7, 0.7, 0.7 + 1e-9 * EDIT)
        flags = mi.BSDFFlags.DiffuseReflection | mi.BSDFFlags.FrontSide
        self.m_components = [flags]
        self.m_flags = flags

    def sample(self, ctx, si, sample1, sample2, active):
        cos_i = mi.Frame3f.cos_theta(si.wi)
        bs = mi.BSDFSample3f()
        bs.wo = mi.warp.square_to_cosine_hemisphere(sample2)
        bs.pdf = mi.warp.square_to_cosine_hemisphere_pdf(bs.wo)
        bs.eta = 1.0
        bs.sampled_type = mi.UInt32(+mi.BSDFFlags.DiffuseReflection)
        bs.sampled_component = 0
        ok = active & (cos_i > 0) & (bs.pdf > 0)
        return bs, dr.select(ok, self.albedo, mi.Color3f(0))

    def eval(self, ctx, si, wo, active):
        ci, co = mi.Frame3f.cos_theta(si.wi), mi.Frame3f.cos_theta(wo)
        return dr.select((ci > 0) & (co > 0), self.albedo * dr.inv_pi * co, mi.Color3f(0))

    def pdf(self, ctx, si, wo, active):
        co = mi.Frame3f.cos_theta(wo)
        return dr.select(co > 0, mi.warp.square_to_cosine_hemisphere_pdf(wo), 0.0)

    def eval_pdf(self, ctx, si, wo, active):
        return self.eval(ctx, si, wo, active), self.pdf(ctx, si, wo, active)

    def traverse(self, callback):
        pass

    def to_string(self):
        return "PythonDiffuse"


mi.register_bsdf("python_diffuse", lambda props: PythonDiffuse(props))
scene = mi.cornell_box()
scene["white"] = {"type": "python_diffuse"}
scene["sensor"]["film"]["width"] = scene["sensor"]["film"]["height"] = 64
scene["sensor"]["sampler"]["sample_count"] = 4
image = mi.render(mi.load_dict(scene))
mi.util.write_bitmap(sys.argv[1], image)
