"""What the display form and the line breaking cost per item, on the real CFLUE file.

    python bench/bench_text_display.py [--file ../shared/data/cflue/knowledge.json] [--width 78]

For each of the 3,864 items (question, choices and explanation), cold caches:
the display form (entities, LaTeX), the break opportunities (ICU + tailoring) and
the wrap at one width; then the same text through the stock wrapper
(``rich._wrap.divide_line``) for comparison.  Prints p50, p95 and max per item.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--file", type=Path, default=ROOT.parent / "shared" / "data" / "cflue" / "knowledge.json"
    )
    parser.add_argument("--width", type=int, default=78)
    args = parser.parse_args()

    from rich._wrap import divide_line
    from rich.cells import cell_len

    from db.formats import read_records
    from reviewer import display_text as display_module
    from reviewer import line_breaking

    drafts = [record.draft for record in read_records(args.file, "cflue") if record.draft]
    display_module.display_text("$x_1$")  # import pylatexenc once, outside the figures
    ours: list[float] = []
    stock: list[float] = []
    for draft in drafts:
        fields = [draft.prompt, *draft.choices.values(), draft.explanation or ""]
        display_module._display_form.cache_clear()
        line_breaking.break_opportunities.cache_clear()
        line_breaking._measure.cache_clear()
        started = time.perf_counter()
        for field in fields:
            for paragraph in display_module.display_text(field).split("\n"):
                line_breaking.wrap_offsets(paragraph, args.width, cell_len=cell_len)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        for field in fields:
            for paragraph in field.split("\n"):
                divide_line(paragraph, args.width, fold=True)
        stock.append(time.perf_counter() - started)
    for name, values in (("display form + our wrap", ours), ("stock wrap", stock)):
        print(
            f"{name:>24}: per item p50 {statistics.median(values) * 1e3:.2f} ms, "
            f"p95 {percentile(values, 0.95) * 1e3:.2f} ms, max {max(values) * 1e3:.2f} ms "
            f"({len(values)} items, width {args.width})"
        )


if __name__ == "__main__":
    main()
