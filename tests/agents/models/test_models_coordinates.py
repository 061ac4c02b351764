"""Model families' coordinate formats: which format a model is asked for, and the one
conversion of points and boxes into pixels."""

from __future__ import annotations

import pytest

from agentic_env.agents.models import extract_json
from agentic_env.agents.models.coordinates import (
    FORMATS,
    QWEN25_MAX_PIXELS,
    answer_format,
    family_of,
    format_for_model,
    read_point_markup,
    resized_input,
    to_pixels,
)

#: A 480 x 640 image (height, width).
H, W = 480, 640


@pytest.mark.parametrize(("model", "family", "fmt"), [
    ("gemini/gemini-2.5-flash", "gemini", "norm1000_yx"),
    ("vertex_ai/gemini-2.5-pro", "gemini", "norm1000_yx"),
    ("openrouter/google/gemini-3-flash", "gemini", "norm1000_yx"),
    ("openai/Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl", "pixels_28"),
    ("ollama/qwen2.5vl:7b", "qwen2.5-vl", "pixels_28"),
    ("openrouter/qwen/qwen3-vl-235b-a22b-instruct", "qwen3-vl", "norm1000_xy"),
    ("ollama/qwen3-vl:8b", "qwen3-vl", "norm1000_xy"),
    ("openai/Qwen/Qwen2-VL-7B-Instruct", "qwen2-vl", "norm1000_xy"),
    ("openai/allenai/Molmo-7B-D-0924", "molmo", "percent"),
    ("gpt-4o", None, "pixels"),
    ("anthropic/claude-sonnet-4-5", None, "pixels"),
    ("sim-oracle", None, "pixels"),
    ("replay:cassettes", None, "pixels"),
])
def test_the_format_follows_the_model_family(model: str, family: str | None,
                                             fmt: str) -> None:
    assert family_of(model) == family
    assert format_for_model(model) is FORMATS[fmt]


@pytest.mark.parametrize(("fmt", "point", "box"), [
    ("pixels", [320, 120], [160, 60, 480, 180]),
    ("norm1000_yx", [250, 500], [125, 250, 375, 750]),
    ("norm1000_xy", [500, 250], [250, 125, 750, 375]),
    ("percent", [50, 25], [25, 12.5, 75, 37.5]),
    ("pixels_28", [322, 119], [161, 59.5, 483, 178.5]),  # the input is 476 x 644
])
def test_every_format_converts_to_the_same_pixels(fmt: str, point: list[float],
                                                  box: list[float]) -> None:
    assert to_pixels(point, FORMATS[fmt], H, W) == pytest.approx([320, 120])
    assert to_pixels(box, FORMATS[fmt], H, W) == pytest.approx([160, 60, 480, 180])


def test_only_points_and_boxes_convert() -> None:
    assert to_pixels(None, FORMATS["percent"], H, W) is None
    assert to_pixels([1, 2, 3], FORMATS["percent"], H, W) is None


def test_qwen25_inputs_are_resized_to_multiples_of_28_within_the_pixel_budget() -> None:
    assert resized_input(480, 640) == (476.0, 644.0)
    assert resized_input(20, 20) == (56.0, 56.0)  # grown to the least pixel count
    rows, cols = resized_input(10000, 12000)
    assert rows * cols <= QWEN25_MAX_PIXELS and rows % 28 == cols % 28 == 0
    assert cols / rows == pytest.approx(1.2, rel=0.02)


def test_the_prompt_states_the_format() -> None:
    gemini = FORMATS["norm1000_yx"].prompt_values(H, W)
    assert gemini["point_form"] == "[y, x]" and "0-1000" in gemini["coordinates"]
    assert "y first" in gemini["coordinates"]
    assert "(640 x 480 pixels)" in FORMATS["pixels"].describe(H, W)
    assert "644 x 476" in FORMATS["pixels_28"].describe(H, W)
    assert "percent (0-100)" in FORMATS["percent"].describe(H, W)


def test_an_answer_naming_its_format_wins_over_the_asked_one() -> None:
    asked = FORMATS["norm1000_yx"]
    assert answer_format({"coordinates": "pixels"}, asked) is FORMATS["pixels"]
    assert answer_format({"coordinates": "inches"}, asked) is asked
    assert answer_format({}, asked) is asked


@pytest.mark.parametrize("text", [
    '<point x="50.0" y="25" alt="red cube">red cube</point>',
    'The cube is here: <point y="25" x="50" alt="red cube">red cube</point>.',
    '<points x1="50" y1="25" x2="10.5" y2="70" alt="red cube">red cube</points>',
])
def test_molmo_point_markup_reads_as_a_percent_answer(text: str) -> None:
    answer = read_point_markup(text)
    assert answer == {"found": True, "point": [50.0, 25.0], "box": None,
                      "coordinates": "percent", "reasoning": "red cube"}
    assert extract_json(text) == answer
    assert to_pixels(answer["point"], answer_format(answer, FORMATS["pixels"]), H,
                     W) == pytest.approx([320, 120])


def test_text_without_markup_is_no_point() -> None:
    assert read_point_markup("There is no red cube.") is None
    assert read_point_markup('<point x="left" y="top">cube</point>') is None
