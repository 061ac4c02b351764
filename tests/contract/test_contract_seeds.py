"""Reserved seed ranges: demonstrations and evaluations never share a layout, refusals name
both ranges, and the seeds record round-trips."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agentic_env.contract.seeds import (
    DEMONSTRATION_SEED_START,
    DEMONSTRATION_SEEDS,
    EVALUATION_SEEDS,
    SEEDS_FILE,
    check_demonstration_seeds,
    check_disjoint,
    check_evaluation_seeds,
    check_unseen,
    describe,
    read_seeds,
    write_seeds,
)
from agentic_env.errors import InvalidConfigError

BOTH_RANGES = r"0-999999.*1000000-1999999|1000000-1999999.*0-999999"


def test_the_ranges_are_disjoint_and_contiguous() -> None:
    assert EVALUATION_SEEDS.stop == DEMONSTRATION_SEEDS.start == DEMONSTRATION_SEED_START
    assert not set(EVALUATION_SEEDS) & set(DEMONSTRATION_SEEDS[:10])
    assert 1000 in EVALUATION_SEEDS  # lerobot-eval's default start seed evaluates
    assert describe(DEMONSTRATION_SEEDS) == "1000000-1999999"
    assert describe(EVALUATION_SEEDS) == "0-999999"


def test_seeds_of_the_wrong_range_are_refused_naming_both() -> None:
    check_demonstration_seeds([DEMONSTRATION_SEED_START, 1_999_999])
    check_evaluation_seeds([0, 999_999])
    with pytest.raises(InvalidConfigError, match=BOTH_RANGES) as refused:
        check_demonstration_seeds(range(1000, 1040))
    assert "1000, 1001, 1002, 1003, 1004 and 35 more" in str(refused.value)
    assert "--seed-start 1000000" in str(refused.value)
    with pytest.raises(InvalidConfigError, match=BOTH_RANGES):
        check_evaluation_seeds([3, DEMONSTRATION_SEED_START])
    with pytest.raises(InvalidConfigError, match=BOTH_RANGES):
        check_demonstration_seeds([-1])


def test_an_evaluation_on_a_training_layout_is_refused() -> None:
    check_disjoint([0, 1, 2], [3, 4])
    with pytest.raises(InvalidConfigError, match=r"seed\(s\) 4 are layouts ds was trained on"):
        check_disjoint([4, 5], [3, 4], "ds")
    with pytest.raises(InvalidConfigError, match=BOTH_RANGES):
        check_unseen([4], [4], "ds")
    with pytest.raises(InvalidConfigError, match=BOTH_RANGES):  # the range, before any record
        check_unseen([DEMONSTRATION_SEED_START], None, "ds")
    check_unseen([0, 1], (DEMONSTRATION_SEED_START,), "ds")


def test_unknown_training_seeds_only_warn(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="agentic_env.contract.seeds"):
        check_unseen([7], None, "the checkpoint old")
    (record,) = caplog.records
    assert "the checkpoint old records no demonstration seeds" in record.getMessage()
    assert "cannot check that evaluation seed(s) 7" in record.getMessage()


def test_the_seeds_record_round_trips(tmp_path: Path) -> None:
    assert read_seeds(tmp_path) is None  # made before seeds were recorded
    path = write_seeds(tmp_path / "meta", [DEMONSTRATION_SEED_START + 2, DEMONSTRATION_SEED_START],
                       source="stacking-64x36")
    assert path.name == SEEDS_FILE
    assert read_seeds(tmp_path / "meta") == (DEMONSTRATION_SEED_START, DEMONSTRATION_SEED_START + 2)
    stored = json.loads(path.read_text())
    assert stored["source"] == "stacking-64x36"
    assert stored["demonstration_range"] == "1000000-1999999"
    path.write_text(json.dumps([1, 2]))
    with pytest.raises(InvalidConfigError, match=SEEDS_FILE):
        read_seeds(tmp_path / "meta")
