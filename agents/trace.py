"""Episode traces: a folder per episode that a person can read step by step.

Layout of a trace folder::

    episode.json         spec, instruction, final evaluation and the agent's report
    events.jsonl         every decision and primitive outcome, in order
    calls/NNN-<module>.json   each model call: prompt, raw responses, parsed answer, usage
    calls/NNN-<module>-K.png  the images sent with it
    video.mp4            the episode (overview + both cameras), when recorded
    index.html           all of the above on one self-contained page (images inlined)
"""

from __future__ import annotations

import base64
import html
import io
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from agentic_env.agents.models.base import CallRecord

#: Longest side (pixels) of an image inlined into index.html.
HTML_IMAGE_SIZE = 360


def _png(pixels: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(pixels, dtype=np.uint8)).save(buffer, format="PNG")
    return buffer.getvalue()


def _thumbnail_uri(pixels: np.ndarray) -> str:
    image = Image.fromarray(np.asarray(pixels, dtype=np.uint8))
    image.thumbnail((HTML_IMAGE_SIZE, HTML_IMAGE_SIZE))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


class EpisodeTrace:
    """Writes one episode's trace folder (see the module docstring) as the episode runs.

    Args:
        folder: where to write; created if missing.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        (self.folder / "calls").mkdir(parents=True, exist_ok=True)
        self._events = (self.folder / "events.jsonl").open("w")
        self._rows: list[tuple[str, dict[str, Any], list[str]]] = []
        self.calls: list[CallRecord] = []
        self._frames: list[np.ndarray] = []

    def on_call(self, record: CallRecord) -> None:
        """Store one model call (the ``on_call`` hook of the model layer)."""
        self.calls.append(record)
        index = len(self.calls)
        stem = f"{index:03d}-{record.query.module}"
        thumbnails = []
        for k, image in enumerate(record.query.images):
            (self.folder / "calls" / f"{stem}-{k}.png").write_bytes(_png(image.pixels))
            thumbnails.append(_thumbnail_uri(image.pixels))
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
        (self.folder / "calls" / f"{stem}.json").write_text(json.dumps(entry, indent=2))
        self._rows.append(("call", entry, thumbnails))

    def on_event(self, event: dict[str, Any]) -> None:
        """Store one agent decision or primitive outcome."""
        self._events.write(json.dumps(event, default=str) + "\n")
        self._events.flush()
        self._rows.append(("event", event, []))

    def add_frame(self, frame: np.ndarray) -> None:
        """Append a video frame (H, W, 3) uint8."""
        self._frames.append(np.asarray(frame, dtype=np.uint8))

    def finish(self, summary: dict[str, Any], fps: int = 10) -> None:
        """Write episode.json, the video and index.html; close the event log."""
        self._events.close()
        (self.folder / "episode.json").write_text(json.dumps(summary, indent=2, default=str))
        if self._frames:
            import imageio.v3 as iio

            iio.imwrite(self.folder / "video.mp4", np.stack(self._frames), fps=fps,
                        codec="libx264", macro_block_size=8)
            self._frames.clear()
        (self.folder / "index.html").write_text(self._html(summary))

    def _html(self, summary: dict[str, Any]) -> str:
        esc = html.escape
        facts = "".join(f"<tr><th>{esc(str(k))}</th><td>{esc(str(v))}</td></tr>"
                        for k, v in summary.get("result", {}).items()
                        if not isinstance(v, (list, dict)))
        rows = []
        for kind, data, images in self._rows:
            if kind == "event":
                detail = {k: v for k, v in data.items() if k not in ("kind", "t")}
                css = "bad" if data.get("ok") is False or data.get("success") is False else ""
                rows.append(f"<div class='event {css}'><b>{esc(data['kind'])}</b> "
                            f"<span class='t'>{data.get('t', '')} s</span> "
                            f"<code>{esc(json.dumps(detail, default=str))}</code></div>")
            else:
                pictures = "".join(f"<img src='{uri}'>" for uri in images)
                answer = json.dumps(data["parsed"], indent=1) if data["parsed"] else (
                    data["error"] or "")
                usage = data["usage"]
                rows.append(
                    f"<div class='call'><h3>{esc(data['module'])} · {esc(data['model'])} · "
                    f"{usage['latency_s']:.2f} s · {usage['input_tokens']}+"
                    f"{usage['output_tokens']} tokens · attempts {data['attempts']}</h3>"
                    f"<div class='pics'>{pictures}</div><details><summary>prompt</summary>"
                    f"<pre>{esc(data['prompt'])}</pre></details><pre>{esc(answer)}</pre></div>")
        video = ("<video controls src='video.mp4' width='720'></video>"
                 if (self.folder / "video.mp4").exists() else "")
        return f"""<!doctype html><html><head><meta charset='utf-8'>
<title>{esc(str(summary.get('title', 'episode')))}</title><style>
body{{font-family:sans-serif;max-width:1100px;margin:auto;padding:1em}}
table{{border-collapse:collapse}}th,td{{border:1px solid #ccc;padding:2px 8px;text-align:left}}
.event{{padding:3px;border-left:4px solid #4a4;margin:2px 0}}.event.bad{{border-color:#c33}}
.call{{border:1px solid #bbb;border-radius:6px;padding:6px;margin:8px 0;background:#fafafa}}
.pics img{{margin-right:6px;border:1px solid #999}}pre{{white-space:pre-wrap;font-size:12px}}
code{{font-size:12px}}.t{{color:#888}}</style></head><body>
<h1>{esc(str(summary.get('title', 'episode')))}</h1>
<p><b>Instruction:</b> {esc(str(summary.get('instruction', '')))}</p>
<table>{facts}</table>{video}<h2>Step by step</h2>{''.join(rows)}</body></html>"""
