"""JSON values written in bulk (fast_insert): orjson, and json.dumps for what orjson refuses."""

from __future__ import annotations

import json

from finance.ledger.db.fastinsert import json_text


def test_json_text_is_json_for_what_orjson_takes_and_refuses():
    cells = ["2024-01-02", "Bäcker", "-3,20", ""]
    assert json.loads(json_text(cells)) == cells
    # orjson refuses integers past 64 bits and keys that are not strings: json.dumps writes them
    assert json.loads(json_text([2**70])) == [2**70]
    assert json.loads(json_text({1: "a"})) == {"1": "a"}
