#!/usr/bin/env bash
# Build the HTML report of one preset and screenshot its first page (the papers' tallies per paper)
# with headless Chromium (Debian: apt-get install chromium), to look at it as a reader would:
#   scripts/report-screenshot.sh [preset]            quick by default; writes report-<preset>.html/.png
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-quick}"
export PATH="$PWD/.venv/bin:$PATH"
config=()
[ "$preset" = full ] || config=(--configfile "config/$preset.yaml")
snakemake --report "report-$preset.html" "${config[@]}"
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$browser" ]; then
  echo "error: no Chromium on PATH to screenshot report-$preset.html (Debian: apt-get install chromium)" >&2
  exit 1
fi
"$browser" --headless --no-sandbox --disable-gpu --window-size=1400,1000 \
  --screenshot="$PWD/report-$preset.png" "file://$PWD/report-$preset.html" 2>/dev/null
echo "report-$preset.html: its first page is report-$preset.png"
