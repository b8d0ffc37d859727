"""curves package."""
