"""The shipped JSON Schema is current, and every shipped scene satisfies it."""
import json
import pathlib

import jsonschema
import pytest

from raytrace.scene.schema import SCHEMA_PATH, build_schema

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_shipped_schema_is_up_to_date():
    shipped = json.loads(SCHEMA_PATH.read_text())
    assert shipped == build_schema(), "regenerate with: python scripts/build_schema.py"


def test_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(json.loads(SCHEMA_PATH.read_text()))


@pytest.mark.parametrize("path", sorted((REPO / "scenes").glob("*.json")), ids=lambda p: p.stem)
def test_scene_files_validate(path):
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))
    errors = [e.message for e in validator.iter_errors(json.loads(path.read_text()))]
    assert errors == []
