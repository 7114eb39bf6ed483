"""A Select whose open list draws Chinese (double-width) options whole over any widget.

Textual 8.2.8's compositor cuts every screen line at each edge of every visible widget,
the ones hidden under an overlay too, and a cut that falls inside a double-width
character turns it into two spaces (Rich's ``Segment.divide``; Textual issue #6357).
An open Select list over the filter's buttons showed 初    济师 for 初级经济师.  While
the list is open, the widgets under it whose edges would cut its lines are hidden: the
list covers them anyway, and a hidden widget makes no cuts."""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Select
from textual.widgets._select import SelectOverlay  # no public name (8.2.8)

ValueType = TypeVar("ValueType")


def cuts_into(widget: Widget, area: Region) -> bool:
    """Whether ``widget`` lies under ``area`` with an edge (its scrollbar's too) inside
    it, where the compositor would cut ``area``'s lines."""
    region = widget.region
    if not region.overlaps(area):
        return False
    edges = (region.x, region.right, region.right - widget.scrollbar_size_vertical)
    return any(area.x < edge < area.right for edge in edges)


class DropDown(Select[ValueType]):
    """vetbench's Select: hides what would cut its open list's lines (see the module)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._hidden_under: dict[Widget, object] = {}  # each with its own visibility rule

    def watch_expanded(self, expanded: bool) -> None:
        self._show_hidden()
        if expanded:  # the list has its place once laid out
            self.call_after_refresh(self._hide_what_cuts_the_list)

    def on_resize(self, _event: events.Resize) -> None:
        self.watch_expanded(self.expanded)  # the list moved with the screen

    def _hide_what_cuts_the_list(self) -> None:
        if not self.expanded or not self.is_attached:
            return
        overlay = self.query_one(SelectOverlay)
        keep = {overlay, *overlay.ancestors_with_self, *overlay.walk_children()}
        for widget in self.screen.walk_children(Widget):  # a container before its children
            if (
                widget not in keep
                and widget.visible
                and not any(above in self._hidden_under for above in widget.ancestors)
                and cuts_into(widget, overlay.region)
            ):
                self._hidden_under[widget] = widget.styles.inline.get_rule("visibility", None)
                widget.visible = False

    def _show_hidden(self) -> None:
        for widget, rule in self._hidden_under.items():
            if rule is None:  # back to what the stylesheet says
                widget.styles.inline.clear_rule("visibility")
                widget.refresh(layout=True)
            else:
                widget.visible = rule == "visible"
        self._hidden_under.clear()
