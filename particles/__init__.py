"""particles package."""
