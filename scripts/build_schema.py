"""Regenerate raytrace/scene/scene.schema.json (core types + library plug-in types).

    python scripts/build_schema.py
"""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from raytrace.scene.schema import main  # noqa: E402

main()
