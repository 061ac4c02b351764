"""``agentic-env bench-calibration`` writes its measurement to the file its user names, in the
shape of ``world.toml``'s calibration tables, and never writes package data."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

pytest.importorskip("cv2")

from agentic_env.bench import calibration  # noqa: E402
from agentic_env.bench.handeye import HandEyeSimConfig  # noqa: E402
from agentic_env.cli.bench import calibration as command  # noqa: E402
from agentic_env.sim.realism import WORLD_FILE  # noqa: E402

SUMMARY = {"translation_bias_mm": [0.1, 0.2, 0.3], "translation_std_mm": [1.0, 2.0, 3.0],
           "rotation_bias_deg": [0.01, 0.02, 0.03], "rotation_std_deg": [0.1, 0.2, 0.3],
           "mean_residual_translation_mm": 0.5, "mean_residual_rotation_deg": 0.05,
           "mean_residual_reprojection_px": 0.2}


def test_the_measurement_has_the_shape_of_the_packaged_calibration_tables() -> None:
    text = calibration.fragment({camera: SUMMARY for camera in calibration.CAMERAS},
                                HandEyeSimConfig(), sessions=2, seed=5, sensors=True)
    measured = tomllib.loads(text)["calibration"]
    packaged = tomllib.loads(WORLD_FILE.read_text())["calibration"]
    assert set(measured) == set(packaged)
    for camera in calibration.CAMERAS:
        assert set(measured[camera]) == set(packaged[camera])
        assert measured[camera]["translation_std_mm"] == [1.0, 2.0, 3.0]
    assert "--sessions 2 --views 12 --seed 5" in measured["source"]


def test_the_command_writes_to_out_and_leaves_package_data_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(command, "measure", lambda config, sessions, seed, on_session:
                        calibration.Calibration({c: SUMMARY for c in calibration.CAMERAS},
                                                sensors=False))
    packaged = WORLD_FILE.read_bytes()
    out = tmp_path / "nested" / "calibration.toml"
    assert command.main(["--sessions", "1", "--views", "3", "--out", str(out)]) == 0
    assert tomllib.loads(out.read_text())["calibration"]["wrist"]["frame"] == "flange"
    assert WORLD_FILE.read_bytes() == packaged
    assert str(out) in capsys.readouterr().out


def test_the_help_names_the_output_file_and_the_flag_that_wrote_package_data_is_gone(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        command.main(["--help"])
    assert "--out" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        command.main(["--write"])
