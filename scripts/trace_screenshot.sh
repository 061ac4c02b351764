#!/usr/bin/env bash
# Renders a trace's index.html in headless Chromium and saves a full-width PNG of its top,
# to check the page renders (Debian: apt-get install -y chromium). Usage:
#   bash scripts/trace_screenshot.sh runs/<episode key> [out.png] [height px]
# The default output is <trace folder>/index.png, 2400 px tall.
set -euo pipefail
if (($# < 1)); then
  echo "usage: $0 TRACE_FOLDER [OUT.png] [HEIGHT]" >&2
  exit 2
fi
page="$(realpath "$1")/index.html"
out="$(realpath -m "${2:-$1/index.png}")"
height="${3:-2400}"
[[ -f "$page" ]] || { echo "no $page" >&2; exit 2; }
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
[[ -n "$browser" ]] || { echo "no Chromium found: apt-get install -y chromium" >&2; exit 2; }
"$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --hide-scrollbars --window-size="1200,$height" --screenshot="$out" "file://$page" \
  2> >(grep -v -e "^\[" -e "^$" -e "unexpected operator" >&2 || true)
[[ -s "$out" ]] || { echo "no screenshot written" >&2; exit 1; }
echo "$out"
