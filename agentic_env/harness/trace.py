"""Episode traces: a folder per episode that a person can read step by step.

Layout of a trace folder::

    episode.json         spec, instruction, final evaluation and the agent's report
    events.jsonl         every decision and primitive outcome, in order
    calls/NNN-<module>.json   each model call: prompt, raw responses, parsed answer, usage
    calls/NNN-<module>-K.png  the images sent with it
    video.mp4            the episode (overview + both cameras), when recorded
    index.html           all of the above on one self-contained page (thumbnails inlined)

The page opens with the outcome (rounded), the video and the calls per module, then a
timeline: each plan step as a heading, each decision in words with its time, the cameras'
view after each primitive, and each model call with its images, verdict and latency;
failures are marked red.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any

import mujoco
import numpy as np
from PIL import Image

from agentic_env.agents.models.base import CallRecord
from agentic_env.harness.trace_video import TraceVideo
from agentic_env.text import blank, readable, readable_number, safe_data, safe_text
from agentic_env.visualize import resize_nearest

#: Longest side (pixels) of a model call's image inlined into index.html (a click opens the
#: full image).
HTML_IMAGE_SIZE = 240
#: Size (width, height), pixels, of each camera's view shown after a primitive.
VIEW_THUMBNAIL = (192, 108)
#: Verdicts that mean "no" (shown red): a failed check, a rejected grasp, nothing found.
NEGATIVE_VERDICTS = frozenset({"false", "REJECT_GRASP", "not_found"})
#: Event kinds that are failures or setbacks (shown red).
BAD_EVENTS = frozenset({"stop", "module_failed", "plan_error", "parser_error",
                        "grounding_failed", "unknown_action", "replan"})
#: Event fields shown as text blocks rather than in the line of values.
_TEXT_FIELDS = ("reasoning", "error", "detail", "message")


def call_verdict(record: CallRecord) -> str | None:
    """The decision of a model call in one word (``"true"``/``"false"`` for checks and
    MALLVI's Reflector, ``"EXECUTE_GRASP"``/``"REJECT_GRASP"``, ``"found"``/``"not_found"``),
    ``None`` when the module has none (the parser) or the call failed."""
    if record.reply is None:
        return None
    parsed = record.reply.parsed
    if "success" in parsed:
        return str(bool(parsed["success"])).lower()
    if "task_complete" in parsed:  # MALLVI's Reflector
        return str(bool(parsed["task_complete"])).lower()
    if "evaluation" in parsed:
        return str(parsed["evaluation"].get("action"))
    if "found" in parsed:
        return "found" if parsed["found"] else "not_found"
    return None


def _png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(pixels, dtype=np.uint8)).save(buffer, format="PNG",
                                                             compress_level=1)
    return buffer.getvalue()


def _jpeg_uri(pixels: np.ndarray, longest: int | None = None) -> str:
    image = Image.fromarray(np.asarray(pixels, dtype=np.uint8))
    if longest is not None:
        image.thumbnail((longest, longest))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=85)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()


def _value(value: Any) -> str:
    """Any event or summary value as escaped, rounded text (never a Python repr)."""
    return html.escape(readable(value))


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1.0 else f"{value:.2f} s"


class EpisodeTrace:
    """Writes one episode's trace folder (see the module docstring) as the episode runs.

    Args:
        folder: where to write; created if missing.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        (self.folder / "calls").mkdir(parents=True, exist_ok=True)
        self._events = (self.folder / "events.jsonl").open("w")
        self._rows: list[dict[str, Any]] = []
        self.calls: list[CallRecord] = []
        self.video: TraceVideo | None = None
        self._views: tuple[np.ndarray, ...] = ()

    def record_video(self, model: mujoco.MjModel, cameras: tuple[str, ...]) -> TraceVideo:
        """Start ``video.mp4`` of ``model``'s simulation (see :class:`TraceVideo`); the caller
        feeds it with :meth:`TraceVideo.sample` after every control period."""
        self.video = TraceVideo(self.folder / "video.mp4", model, cameras)
        return self.video

    def on_observation(self, observation: dict[str, np.ndarray]) -> None:
        """Keep the cameras' view of the latest observation (shown after the next primitive,
        and beside the video's overview)."""
        width, height = VIEW_THUMBNAIL
        self._views = tuple(resize_nearest(value, width, height)
                            for key, value in observation.items() if key.endswith("_rgb"))
        if self.video is not None:
            self.video.observe(observation)

    def on_call(self, record: CallRecord) -> None:
        """Store one model call (the ``on_call`` hook of the model layer)."""
        self.calls.append(record)
        index = len(self.calls)
        stem = f"{index:03d}-{record.query.module}"
        images = []
        for k, image in enumerate(record.query.images):
            name = f"{stem}-{k}.png"
            (self.folder / "calls" / name).write_bytes(_png(image.pixels))
            images.append((f"calls/{name}", image.name,
                           _jpeg_uri(image.pixels, HTML_IMAGE_SIZE)))
        entry = {
            "module": record.query.module,
            "model": record.model,
            "template": record.query.template,
            "prompt": record.query.prompt,
            "images": [image.name for image in record.query.images],
            "raw_responses": list(record.raw_texts),
            "parsed": record.reply.parsed if record.reply else None,
            "attempts": record.reply.attempts if record.reply else len(record.raw_texts),
            "rejected_attempts": list(record.reply.errors) if record.reply else [],
            "error": record.error,
            "usage": asdict(record.usage),
        }
        entry = safe_data(entry)
        (self.folder / "calls" / f"{stem}.json").write_text(json.dumps(entry, indent=2))
        self._rows.append({"call": entry, "index": index, "images": images,
                           "verdict": call_verdict(record)})

    def on_event(self, event: dict[str, Any]) -> None:
        """Store one agent decision or primitive outcome."""
        event = safe_data(event)
        self._events.write(json.dumps(event, default=str) + "\n")
        self._events.flush()
        views = self._views if event.get("kind") == "primitive" else ()
        self._rows.append({"event": event, "views": views})

    def finish(self, summary: dict[str, Any]) -> None:
        """Finish the video, write episode.json and index.html; close the event log."""
        self._events.close()
        if self.video is not None:
            self.video.close()
        summary = safe_data(summary)
        (self.folder / "episode.json").write_text(json.dumps(summary, indent=2, default=str))
        (self.folder / "index.html").write_text(safe_text(self._html(summary), None))

    # -- the page ------------------------------------------------------------------------

    def _html(self, summary: dict[str, Any]) -> str:
        esc = html.escape
        title = esc(str(summary.get("title", "episode")))
        video = ""
        if self.video is not None and self.video.error is None:
            speed = self.video.fps * self.video.period
            video = ("<video controls muted src='video.mp4'></video><p class='note'>Overview "
                     "beside the shoulder (top) and wrist cameras' latest views; a frame every "
                     f"{readable_number(self.video.period)} simulated s, played at "
                     f"{readable_number(speed)}x speed.</p>")
        elif self.video is not None:
            video = f"<p class='bad'>No video: {esc(self.video.error or '')}</p>"
        timeline = "".join(self._row(row) for row in self._rows)
        return f"""<!doctype html><html><head><meta charset='utf-8'>
<title>{title}</title><style>{_CSS}</style></head><body>
<h1>{title}</h1>
<p class='instruction'><b>Instruction:</b> {esc(str(summary.get('instruction', '')))}</p>
<div class='top'>{_summary_table(summary.get('result', {}))}{self._call_table()}\
{_names_table(summary.get('names') or {})}</div>
{video}
<h2>Timeline</h2>
<p class='note'>Times are wall-clock seconds since the agent started. Failures are red.</p>
<div class='timeline'>{timeline}</div></body></html>"""

    def _call_table(self) -> str:
        per_module: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in self._rows:
            if "call" in row:
                per_module[row["call"]["module"]].append(row)
        lines = []
        for module, rows in per_module.items():
            latency = sum(r["call"]["usage"]["latency_s"] for r in rows) / len(rows)
            negative = sum(r["verdict"] in NEGATIVE_VERDICTS or r["call"]["error"] is not None
                           for r in rows)
            lines.append(f"<tr><td>{html.escape(module)}</td><td>{len(rows)}</td>"
                         f"<td>{negative}</td><td>{_seconds(latency)}</td></tr>")
        return ("<table class='calls'><tr><th>module</th><th>calls</th><th>no / failed</th>"
                "<th>mean latency</th></tr>" + "".join(lines) + "</table>") if lines else ""

    def _row(self, row: dict[str, Any]) -> str:
        if "call" in row:
            return _call_card(row)
        event = row["event"]
        kind = str(event.get("kind", "event"))
        time = f"<span class='t'>{readable_number(float(event.get('t', 0.0)))} s</span>"
        if kind == "step":
            return (f"<h3 class='step'>{time} {html.escape(str(event.get('step', '')))} "
                    f"<span class='note'>attempt {_value(event.get('attempt'))}</span></h3>")
        bad = (kind in BAD_EVENTS
               or any(event.get(key) is False for key in ("ok", "success", "execute")))
        details = {k: v for k, v in event.items()
                   if k not in ("kind", "t", "steps", *_TEXT_FIELDS) and not blank(v)}
        values = " · ".join(f"<span class='k'>{html.escape(k.replace('_', ' '))}</span> "
                            f"{_value(v)}" for k, v in details.items())
        texts = "".join(f"<div class='text'>{html.escape(str(event[k]))}</div>"
                        for k in _TEXT_FIELDS if event.get(k))
        steps = ""
        if event.get("steps"):
            steps = "<ol>" + "".join(f"<li>{html.escape(str(s))}</li>"
                                     for s in event["steps"]) + "</ol>"
        views = "".join(f"<img src='{_jpeg_uri(view)}'>" for view in row["views"])
        if views:
            views = f"<div class='views'>{views}</div>"
        label = html.escape(kind.replace("_", " "))
        return (f"<div class='event{' bad' if bad else ''}'>{time} <b>{label}</b> {values}"
                f"{texts}{steps}{views}</div>")


def _summary_table(result: dict[str, Any]) -> str:
    """The outcome of the episode, rounded, as a two-column table."""
    if not result:
        return ""
    spec = result.get("spec", {})
    cost = result.get("cost_usd")
    rows = [
        ("episode", f"{spec.get('task')} / {spec.get('setting')} / seed {spec.get('seed')} / "
                    f"{spec.get('agent')} / {spec.get('model')} / verification "
                    f"{spec.get('verification')}"),
        ("success", _value(result.get("success"))),
        ("progress score", f"{result.get('score', 0.0):.2f} (done {result.get('n_done')}, "
                           f"extra {result.get('n_extra')}, required "
                           f"{result.get('n_required')})"),
        ("goal progress", f"{result.get('progress', 0.0):.2f}"),
        ("goal checker wrong", _value(result.get("goal_checker_error"))),
        ("actions", _value(result.get("actions"))),
        ("replans", _value(result.get("replans"))),
        ("model calls", f"{len(result.get('calls', ()))} (tokens {result.get('input_tokens')}"
                        f" in / {result.get('output_tokens')} out, cost "
                        f"{'unknown' if cost is None else f'${cost:.4f}'})"),
        ("time", f"{result.get('wall_s', 0.0):.1f} s wall; episode "
                 f"{result.get('episode_s', 0.0):.1f} s = {result.get('sim_s', 0.0):.1f} s "
                 f"robot + {result.get('model_s', 0.0):.1f} s model"),
    ]
    if result.get("failure"):
        rows.append(("failure", f"{result['failure']}: {result.get('failure_detail', '')}"))
    cells = "".join(
        f"<tr{' class=bad' if name == 'failure' or (name, value) == ('success', 'no') else ''}>"
        f"<th>{name}</th><td>{html.escape(value)}</td></tr>" for name, value in rows)
    return f"<table class='summary'>{cells}</table>"


def _call_card(row: dict[str, Any]) -> str:
    """One model call: module, verdict, latency and tokens, its images, the answer."""
    esc = html.escape
    call, verdict = row["call"], row["verdict"]
    usage = call["usage"]
    bad = call["error"] is not None or verdict in NEGATIVE_VERDICTS
    badge = (f"<span class='verdict {'no' if bad else 'yes'}'>"
             f"{esc(verdict or ('failed' if call['error'] else 'answered'))}</span>")
    tokens = (f" · {usage['input_tokens']} + {usage['output_tokens']} tokens"
              if usage["input_tokens"] or usage["output_tokens"] else "")
    retries = f" · {call['attempts']} attempts" if call["attempts"] > 1 else ""
    pictures = "".join(f"<a href='{path}'><img src='{uri}' title='{esc(name)}'></a>"
                       for path, name, uri in row["images"])
    problems = "".join(f"<div class='text bad'>rejected answer: {esc(str(e))}</div>"
                       for e in call["rejected_attempts"])
    if call["error"]:
        problems += f"<div class='text bad'>{esc(call['error'])}</div>"
    answer = json.dumps(call["parsed"], indent=2) if call["parsed"] is not None else ""
    return (f"<div class='call{' bad' if bad else ''}'><div class='head'>call {row['index']} · "
            f"<b>{esc(call['module'])}</b> · {esc(call['model'])} · {badge} · "
            f"{_seconds(usage['latency_s'])}{tokens}{retries}</div>"
            f"<div class='pics'>{pictures}</div>{problems}"
            f"<details><summary>prompt</summary><pre>{esc(call['prompt'])}</pre></details>"
            f"<details><summary>answer</summary><pre>{esc(answer)}</pre></details></div>")


_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:auto;padding:1em;color:#222}
h1{font-size:1.4em}h3.step{margin:1.2em 0 .3em;padding:4px 8px;background:#eef2f7;
border-radius:4px;font-size:1em}
table{border-collapse:collapse;margin:0 1em 1em 0}th,td{border:1px solid #ccc;padding:3px 8px;
text-align:left;vertical-align:top}th{background:#f4f4f4;font-weight:600}
.top{display:flex;flex-wrap:wrap;align-items:flex-start}
tr.bad td,tr.bad th{background:#fde8e8;color:#a00}
video{width:100%;max-width:864px;border:1px solid #999}
.event{padding:3px 8px;border-left:4px solid #4a4;margin:3px 0;font-size:14px}
.event.bad{border-color:#c33;background:#fdf0f0}
.k{color:#666}.t{color:#888;font-variant-numeric:tabular-nums;display:inline-block;
min-width:4.5em}
.text{margin:2px 0 2px 4.5em;color:#444;font-size:13px;white-space:pre-wrap}
.text.bad{color:#a00}.note{color:#777;font-size:13px}
.views img{margin:4px 6px 0 0;border:1px solid #999}.views{margin-left:4.5em}
.event ol{margin:2px 0 2px 4.5em;font-family:monospace;font-size:13px}
.call{border:1px solid #bbb;border-radius:6px;padding:6px 8px;margin:6px 0 6px 4.5em;
background:#fafafa;font-size:14px}.call.bad{border-color:#c33;background:#fdf0f0}
.verdict{padding:1px 6px;border-radius:8px;color:#fff;font-size:12px}
.verdict.yes{background:#3a3}.verdict.no{background:#c33}
.pics img{margin:4px 6px 0 0;border:1px solid #999;max-height:135px}
pre{white-space:pre-wrap;font-size:12px;background:#fff;border:1px solid #ddd;padding:4px}
"""


def _names_table(names: dict[str, Any]) -> str:
    """The models' own object names and the scene objects they were bound to (unbound and
    ambiguous names in red); empty when every model used the simulator's ids."""
    bound, unbound = names.get("bound", {}), names.get("unbound", [])
    ambiguous = names.get("ambiguous", {})
    if not (bound or unbound):
        return ""
    rows = []
    for name, thing in sorted(bound.items()):
        others = ambiguous.get(name)
        cell = (f"<td class='bad'>{html.escape(thing)} (or {html.escape(', '.join(others))})"
                if others else f"<td>{html.escape(thing)}")
        rows.append(f"<tr><td>{html.escape(name)}</td>{cell}</td></tr>")
    rows += [f"<tr><td>{html.escape(n)}</td><td class='bad'>unbound</td></tr>"
             for n in unbound]
    return ("<table class='calls'><tr><th>model's name</th><th>scene object</th></tr>"
            + "".join(rows) + "</table>")
