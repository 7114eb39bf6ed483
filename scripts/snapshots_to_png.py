"""Render snapshot SVGs to one PNG with headless Chromium, to look at them before committing.

    python scripts/snapshots_to_png.py OUT.png tests/__snapshots__/test_tui_snapshots/*80x24*.svg

Textual's SVG export gives each run of text a ``textLength`` of one cell per
*character*; a Chinese character takes two cells, so a browser squeezes Chinese
text and the runs after it overlap.  The copies rendered here carry the length in
cells instead (the snapshots themselves are left as they are).  Chinese needs a
CJK font (Debian: ``fonts-wqy-microhei``).
"""

from __future__ import annotations

import html
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.cells import cell_len

CELL_PX = 12.2  # width of one cell in Textual's SVG export
TEXT_RUN = re.compile(r'(<text[^>]*?textLength=")[\d.]+("[^>]*>)([^<]*)(</text>)')
VIEW_BOX = re.compile(r'viewBox="0 0 ([\d.]+) ([\d.]+)"')


def with_cell_lengths(svg: str) -> str:
    """``svg`` with every text run's length measured in terminal cells."""

    def fix(match: re.Match[str]) -> str:
        length = CELL_PX * cell_len(html.unescape(match[3]))
        return f"{match[1]}{length:.1f}{match[2]}{match[3]}{match[4]}"

    return TEXT_RUN.sub(fix, svg)


def main(out: Path, svgs: list[Path]) -> None:
    folder = Path(tempfile.mkdtemp(prefix="snapshots-"))
    parts: list[str] = []
    width = height = 0.0
    for index, path in enumerate(svgs):
        text = path.read_text(encoding="utf-8")
        copy = folder / f"{index}.svg"
        copy.write_text(with_cell_lengths(text), encoding="utf-8")
        box = VIEW_BOX.search(text)
        if box is None:
            raise SystemExit(f"{path}: not a Textual SVG screenshot (no viewBox)")
        box_width, box_height = float(box[1]), float(box[2])
        parts.append(
            f'<div style="font:14px monospace;color:#fff">{html.escape(path.name)}</div>'
            f'<img src="{copy.as_uri()}" width="{box_width:.0f}" height="{box_height:.0f}"><br>'
        )
        width, height = max(width, box_width), height + box_height + 22
    page = folder / "page.html"
    page.write_text(
        '<html><body style="margin:0;background:#333">' + "".join(parts) + "</body></html>",
        encoding="utf-8",
    )
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--screenshot={out.resolve()}",
            f"--window-size={int(width) + 10},{int(height) + 10}",
            page.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    print(out)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    main(Path(sys.argv[1]), [Path(argument) for argument in sys.argv[2:]])
