"""What a render writes besides 8-bit PNGs: OpenEXR files with named layers
(:mod:`raytrace.film.exr`)."""
