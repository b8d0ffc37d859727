"""skinning package."""
