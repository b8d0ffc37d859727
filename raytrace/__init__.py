"""raytrace package."""
