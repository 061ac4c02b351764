"""Episode traces: the page reads as text (rounded numbers, no Python reprs, failures marked),
shows every call's images, verdict and latency, and the video is written beside the episode."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import imageio.v3 as iio
import mujoco
import numpy as np
import pytest

from agentic_env.agents.models.base import CallRecord, ModelImage, ModelQuery, ModelReply, Usage
from agentic_env.harness.episode import EpisodeResult, EpisodeSpec, ModuleCall
from agentic_env.harness.trace import EpisodeTrace, call_verdict
from agentic_env.harness.trace_video import OVERVIEW_SIZE, TraceVideo

#: A table, a box and the two cameras the video needs; the box falls when stepped.
SCENE = """
<mujoco>
  <worldbody>
    <light pos="0 0 3" castshadow="true"/>
    <camera name="overview" pos="1.2 -1.2 1.2" xyaxes="1 1 0 -0.4 0.4 1"/>
    <geom type="plane" size="1 1 0.1" rgba="0.8 0.8 0.8 1"/>
    <body name="box" pos="0 0 0.5"><freejoint/><geom type="box" size="0.05 0.05 0.05"
      rgba="0.9 0.2 0.2 1"/></body>
  </worldbody>
</mujoco>
"""


def _record(module: str, parsed: dict | None, latency: float, image: bool = True,
            error: str | None = None, rejected: tuple[str, ...] = ()) -> CallRecord:
    pixels = np.full((90, 160, 3), 120, np.uint8)
    query = ModelQuery(module, module, f"the {module} prompt",
                       (ModelImage("shoulder_rgb", pixels),) if image else ())
    usage = Usage(latency_s=latency, cost_usd=0.0)
    reply = None if parsed is None else ModelReply(parsed, json.dumps(parsed), usage,
                                                   "sim-oracle", 1 + len(rejected), rejected)
    return CallRecord(query, reply, error, ("{}",), usage, "sim-oracle")


def _summary() -> dict:
    spec = EpisodeSpec("stacking", seed=3, realism="ideal")
    result = EpisodeResult(
        spec, success=False, progress=0.3333333333333333, score=0.4166666666666667,
        n_done=1, n_extra=1, n_required=4, actions=3, replans=1, wall_s=12.345678901,
        sim_s=33.300000000000004, cost_usd=0.0, failure="execution",
        failure_detail="pick of red-cube-1 failed: nothing between the fingers",
        calls=(ModuleCall("checker", "sim-oracle", 0.012345678, 0, 0, 0.0, 1, "true"),))
    return {"title": "stacking / lab / seed 3", "instruction": "Stack the <red> cube.",
            "result": result.to_dict(), "report": {"events": []}}


@pytest.fixture
def page(tmp_path: Path) -> str:
    trace = EpisodeTrace(tmp_path)
    trace.on_observation({"shoulder_rgb": np.zeros((360, 640, 3), np.uint8),
                          "wrist_rgb": np.zeros((360, 640, 3), np.uint8),
                          "shoulder_depth": np.zeros((360, 640), np.float32)})
    trace.on_call(_record("parser", {"problem_pddl": "(define (problem p))"}, 0.0123))
    trace.on_event({"kind": "plan", "t": 1.23456789, "attempt": 1,
                    "steps": ["(pick red-cube-1 table)"], "objects": ["red-cube-1"],
                    "reasoning": "one cube"})
    trace.on_event({"kind": "step", "t": 1.3000000001, "step": "(pick red-cube-1 table)",
                    "attempt": 1})
    trace.on_call(_record("grasp", {"evaluation": {"action": "REJECT_GRASP"}}, 1.5,
                          rejected=("not JSON",)))
    trace.on_call(_record("checker", None, 0.2, image=False, error="ModelError: timeout"))
    trace.on_event({"kind": "primitive", "t": 2.5, "primitive": "pick",
                    "position": [0.5099999904632568, -0.21899999678134918, 0.085],
                    "distance": 0.0, "ok": False, "reason": "empty",
                    "message": "nothing between the fingers"})
    trace.finish(_summary())
    return (tmp_path / "index.html").read_text()


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))


def _text(page: str) -> str:
    """The page without inlined images (their base64 holds arbitrary digit runs)."""
    return re.sub(r"data:image/[a-z]+;base64,[A-Za-z0-9+/=]+", "", page)


def test_page_has_no_python_reprs_and_rounds_numbers(page: str) -> None:
    text = _text(page)
    for repr_mark in ("ModuleCall(", "EpisodeSpec(", "{'", "('", "None", "True", "False"):
        assert repr_mark not in text, repr_mark
    # raw floats (0.4166666666666667) would show 5 or more decimals; costs show 4
    assert not re.search(r"\d\.\d{5,}", text), re.search(r"\d\.\d{5,}", text)
    assert "0.42 (done 1, extra 1, required 4)" in text  # the score, two decimals
    assert "12.3 s wall; episode 33.3 s = 33.3 s robot + 0.0 s model" in text
    assert "(0.51, -0.219, 0.085)" in text  # a position, three decimals at most
    assert "1.235 s" in text and "Stack the &lt;red&gt; cube." in text


def test_page_shows_calls_with_images_verdict_latency_and_marks_failures(
        page: str, tmp_path: Path) -> None:
    parsed = _Page()
    parsed.feed(page)
    links = [a["href"] for tag, a in parsed.elements if tag == "a"]
    assert links == ["calls/001-parser-0.png", "calls/002-grasp-0.png"]
    assert all((tmp_path / link).is_file() for link in links)
    images = [a["src"] for tag, a in parsed.elements if tag == "img"]
    assert len(images) == 2 + 2  # two call images, the two cameras after the primitive
    assert all(src.startswith("data:image/jpeg;base64,") for src in images)
    bad = [a.get("class") for tag, a in parsed.elements if "bad" in (a.get("class") or "")]
    # the rejected grasp, the failed call, the failed primitive, the failure row
    assert bad.count("call bad") == 2 and "event bad" in bad and "bad" in bad
    assert "REJECT_GRASP" in page and "1.50 s" in page and "12 ms" in page
    assert "rejected answer: not JSON" in page and "ModelError: timeout" in page
    assert "<video" not in page  # no video was recorded


def test_call_verdicts() -> None:
    assert call_verdict(_record("checker", {"success": True}, 0.0)) == "true"
    assert call_verdict(_record("detector", {"found": False}, 0.0)) == "not_found"
    assert call_verdict(_record("parser", {"problem_pddl": ""}, 0.0)) is None
    assert call_verdict(_record("goal", None, 0.0, error="x")) is None


def _video(tmp_path: Path, xml: str) -> TraceVideo:
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    video = TraceVideo(tmp_path / "video.mp4", model, cameras=("shoulder", "wrist"),
                       period=0.2)
    video.observe({"shoulder_rgb": np.full((36, 64, 3), 200, np.uint8)})
    while data.time < 2.0:  # 100 physics steps of 20 ms: a frame every 0.2 s
        mujoco.mj_step(model, data)
        video.sample(data)
    video.close()
    return video


def test_video_samples_by_sim_time_and_renders_off_the_control_thread(tmp_path: Path) -> None:
    video = _video(tmp_path, SCENE.replace("<mujoco>", "<mujoco><option timestep='0.02'/>"))
    assert video.error is None and video.frames == 10
    first = iio.imread(tmp_path / "video.mp4", index=0)
    width, height = OVERVIEW_SIZE
    assert first.shape == (height, width * 3 // 2, 3)
    assert first[: height // 2, width:].mean() > 150  # the shoulder image, top right
    assert first[height // 2:, width:].mean() < 20  # no wrist image yet: black


def test_a_video_that_cannot_render_leaves_no_file_and_says_why(tmp_path: Path) -> None:
    video = _video(tmp_path, SCENE.replace('name="overview"', 'name="other"'))
    assert video.error is not None and "overview" in video.error
    assert not (tmp_path / "video.mp4").exists()
