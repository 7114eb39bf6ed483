"""The review app: wires the database, the annotator's queue and the screens together.

It computes nothing itself: the queue (``reviewer.queue``) chooses items, the
judgment service (``reviewer.judging``) stores what the screens collect.
:func:`make_app` builds it for the CLI (``vetbench review``) and for the tests.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from db.engine import Database, open_database
from db.vocabulary import Role
from reviewer.queue import ReviewQueue, annotator_queue
from reviewer.queue_filter import QueueFilter
from reviewer.tui.idle_gc import IdleCollector
from reviewer.tui.literal import notify_literally
from reviewer.tui.responsive import HEIGHT_CLASSES, WIDTH_CLASSES
from reviewer.tui.screens.area import AreaScreen
from reviewer.tui.screens.help import HelpPage, HelpRow, HelpScreen
from reviewer.tui.screens.review import ReviewScreen
from reviewer.tui.timer import ActiveTimer
from reviewer.tui.widgets.progress import ProgressLine

if TYPE_CHECKING:
    from evaluator.backends.settings import BackendSettings
    from reviewer.tui.screens.lead_modals import ConfirmModal

AREA_SCREENS: dict[str, tuple[str, str, bool]] = {
    "agreement": ("F2", "Agreement", False),
    "adjudication": ("F3", "Adjudication", True),
    "evaluation": ("F4", "Evaluation", False),
}
"""Other areas' screens: key, title, and whether only leads may open it."""

SCREENS = Binding.Group("Screens")
"""A lead's keys of the other screens, together in the footer."""

IDLE_GC_CHECK_SECONDS = 0.25
IDLE_GC_START_SECONDS = 2.0

HELP_INTRO = (
    "Answer each item blind first, then compare with the key and give one verdict. "
    "Every judgment is saved the moment you give it. Keys below work wherever they "
    "apply; the footer shows the ones that apply now, and Ctrl+P searches all actions. "
    "The mouse works too: click an event or a choice, and the buttons. Esc closes this help."
)

AREA_HELP_INTRO = (
    "The keys of the {title} screen; the footer shows the ones that apply now, and Ctrl+P "
    "searches all actions. Esc closes this help; Esc again closes this screen and goes back "
    "to the one you came from."
)


@runtime_checkable
class HoldsUnsavedWork(Protocol):
    """A screen that may hold typed work that is not saved yet (an edit, a comment)."""

    def quit_question(self) -> str | None:
        """What to ask before quitting loses that work; None when nothing is unsaved."""


class ReviewApp(App[None]):
    """``vetbench review``: one annotator working through the queue."""

    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute, so subclasses elsewhere work
    TITLE = "vetbench review"
    # Every screen gets -narrow or -wide, -short or -tall: below about 100 columns the
    # panels stack, below 30 rows the spacing folds (see app.tcss).
    HORIZONTAL_BREAKPOINTS = WIDTH_CLASSES
    VERTICAL_BREAKPOINTS = HEIGHT_CLASSES
    # The review screen's mode, named: Textual cannot switch back to its own default
    # mode, "_default" (switch_mode knows only added modes; add_mode refuses that name).
    DEFAULT_MODE = "review"

    BINDINGS = [
        # A lead's ways to the other screens, "F2 F3 F4 Screens" (the screen's own key left
        # out), in the footer of the review screen and of each area's screen, kept there
        # however narrow (KeyFooter pins them).  The hidden ones below serve everyone else.
        *[
            Binding(key.lower(), f"lead_screen('{area}')", title, key_display=key, group=SCREENS)
            for area, (key, title, _lead_only) in AREA_SCREENS.items()
        ],
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
        # --- screens of other areas --- (imported when opened)
        *[
            Binding(key.lower(), f"open_area('{area}')", title, show=False)
            for area, (key, title, _lead_only) in AREA_SCREENS.items()
        ],
    ]

    def __init__(
        self,
        db: Database,
        queue: ReviewQueue,
        timer: ActiveTimer,
        notice: str | None = None,
        backend_settings: BackendSettings | None = None,
        filter_notice: str | None = None,
    ) -> None:
        super().__init__()
        self.database = db
        self.queue = queue
        self.timer = timer
        self.backend_settings = backend_settings  # how the evaluation screen opens models
        self.collector = IdleCollector()
        self.identity_notice = notice
        self.filter_notice = filter_notice  # the filter of the last session is on again
        self._quit_asked: ConfirmModal | None = None  # the question quitting asks, while open
        # Each area's screen opens once, as the base of a mode of its own (named after
        # the area), so that its key brings back that very screen with whatever is on
        # it: a run going, a filled form, a dialog.  The open modes, the review screen's
        # first and the one in sight last: Esc goes back along this list.
        self._open_modes: list[str] = [self.DEFAULT_MODE]
        # Areas left with Esc while work of theirs goes on (F4's run): open, off the way back.
        self._working_modes: set[str] = set()
        self.add_mode(self.DEFAULT_MODE, self.get_default_screen)

    def on_mount(self) -> None:
        # Not at once: freezing costs a full collection, which would delay the first item.
        self.set_timer(IDLE_GC_START_SECONDS, self.collector.start)
        self.set_interval(IDLE_GC_CHECK_SECONDS, self.collector.tick)

    def on_unmount(self) -> None:
        self.collector.stop()

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key | events.MouseDown):
            self.collector.touch()
        await super().on_event(event)

    async def action_quit(self) -> None:
        """Quit (q, Ctrl+Q, the palette's Quit); while an edit or a typed comment is not
        saved, ask first, the topmost screen's question, as Esc does in the editor."""
        if self._quit_asked is not None:
            return  # the question is open: it answers
        question = self._quit_question()
        if question is None:
            self.exit()
            return
        from reviewer.tui.screens.lead_modals import ConfirmModal

        def answered(lose: bool | None) -> None:
            self._quit_asked = None
            if lose:
                self.exit()

        self._quit_asked = ConfirmModal(question)
        self.push_screen(self._quit_asked, answered)

    def _quit_question(self) -> str | None:
        return next(
            (
                asked
                for screen in self._screens_topmost_first()
                if isinstance(screen, HoldsUnsavedWork) and (asked := screen.quit_question())
            ),
            None,
        )

    def work_ended(self, said: str) -> bool:
        """The work of a screen (F4's run) ended as ``said``: an open quit question, which
        may be about it, says so and asks again (what is left to lose, or just whether to
        quit), so that it is neither stale nor covered by a notice.  True when it did."""
        if self._quit_asked is None:
            return False
        self._quit_asked.ask(f"{said} {self._quit_question() or 'Quit?'}")
        return True

    def get_default_screen(self) -> Screen[Any]:
        # Who you are (e.g. the first person of a new database was registered) and the
        # filter kept from last time: in the review screen's status line; a toast lay
        # over the verdict keys for 10 s.
        notices = (("Who you are", self.identity_notice), ("Filter", self.filter_notice))
        return ReviewScreen(
            self.database,
            self.queue,
            self.timer,
            tuple((title, text) for title, text in notices if text),
        )

    def _screens_topmost_first(self) -> Iterator[Screen[Any]]:
        """Every screen of every open mode: the one in sight first, the review screen last,
        then those left working."""
        for mode in [*reversed(self._open_modes), *sorted(self._working_modes)]:
            yield from reversed(self.get_screen_stack(mode))

    @property
    def review_screen(self) -> ReviewScreen:
        for screen in self.get_screen_stack(self.DEFAULT_MODE):
            if isinstance(screen, ReviewScreen):
                return screen
        raise LookupError("the review screen is not on the stack")

    def help_rows(self) -> list[HelpRow]:
        """The keys of the screen on top (an area's, or the review screen's), then the app's."""
        top = self.screen
        rows = top.help_rows() if isinstance(top, AreaScreen) else self.review_screen.help_rows()
        rows += [
            HelpRow("App", "?", "this help"),
            HelpRow("App", "Ctrl+P", "command palette: search every action"),
            HelpRow(
                "App",
                "q",
                "quit (everything you judged is already saved; an unsaved edit, and an "
                "item whose key you saw with no verdict yet, are asked about first)",
            ),
        ]
        rows += [
            HelpRow("Other screens", key, f"{title} screen{' (leads only)' if lead_only else ''}")
            for key, title, lead_only in AREA_SCREENS.values()
        ]
        rows.append(
            HelpRow(
                "Other screens",
                " ".join(key for key, _title, _lead_only in AREA_SCREENS.values()),
                "each opens once: its key brings an open one back as you left it (a run "
                "going, a filled form); Esc on it closes it and goes back to the screen "
                "you came from, but F4 with a run going stays open behind (Ctrl+X stops a run)",
            )
        )
        return rows

    def action_help(self) -> None:
        top = self.screen
        if isinstance(top, HelpScreen):
            return
        if isinstance(top, AreaScreen):
            intro = AREA_HELP_INTRO.format(title=top.TITLE)
            page = HelpPage(f"{top.TITLE} — keys", intro, self.help_rows())
        else:
            page = HelpPage("vetbench review — keys", HELP_INTRO, self.help_rows())
        self.push_screen(HelpScreen(page))

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help", "Show every key of this screen", self.action_help)
        if isinstance(screen, ReviewScreen | AreaScreen):
            for title, help_text, callback in screen.palette_commands():
                yield SystemCommand(title, help_text, callback)
        for area, (key, title, _lead_only) in AREA_SCREENS.items():
            if self.may_open(area):
                yield SystemCommand(
                    f"{title} ({key})", f"Open the {title.lower()} screen", self._area_opener(area)
                )

    def _area_opener(self, area: str) -> Callable[[], None]:
        return lambda: self.action_open_area(area)

    # --- screens of other areas ---------------------------------------------------------
    # Each area's screen lives in reviewer/tui/screens/<area>.py as ``<Area>Screen(database,
    # person_name)`` and is imported only when opened, so startup stays fast (and never
    # pulls in the evaluator's heavy libraries).

    def may_open(self, area: str) -> bool:
        _key, _title, lead_only = AREA_SCREENS[area]
        return not lead_only or self.queue.role == Role.LEAD

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The other screens' keys show in a lead's footer (an annotator's are in ``?``)."""
        if action == "lead_screen":
            # the screen whose footer asks: a dialog over it has no app keys of its own
            under = next(screen for screen in reversed(self.screen_stack) if not screen.is_modal)
            here = type(under).__name__ == screen_class_name(str(parameters[0]))
            return self.queue.role == Role.LEAD and not here
        return True

    def action_lead_screen(self, area: str) -> None:
        self.action_open_area(area)

    def action_open_area(self, area: str) -> None:
        if not self.may_open(area):
            # The key is not dead: it says why (the screen shows others' judgments).
            key, title, _lead_only = AREA_SCREENS[area]
            said = (
                f"{key} ({title.lower()}) is for leads: it shows everyone's judgments. "
                f"{self.queue.annotator} is an {self.queue.role}; a lead can make them one "
                f"with `vetbench users add {self.queue.annotator} --role lead`."
            )
            self._say("For leads only", said)
            return
        if area in self._open_modes:  # open already: that screen comes back as it was left
            self._open_modes.remove(area)
        elif area in self._working_modes:  # left working: back, with what it did meanwhile
            self._working_modes.remove(area)
        else:
            self.add_mode(area, self._area_screen_maker(area))
        self._open_modes.append(area)
        self.switch_mode(area)  # on its own screen, a no-op: the key changes nothing

    def _area_screen_maker(self, area: str) -> Callable[[], Screen[Any]]:
        module = importlib.import_module(f"reviewer.tui.screens.{area}")
        screen_class = getattr(module, screen_class_name(area))
        options = {"backend_settings": self.backend_settings} if area == "evaluation" else {}
        return lambda: screen_class(self.database, self.queue.annotator, **options)

    def _say(self, title: str, said: str) -> None:
        """A warning where the person looks: on the review screen in its progress line (a
        toast lay over its verdict keys), elsewhere as a notice."""
        if isinstance(self.screen, ReviewScreen):
            self.screen.query_one(ProgressLine).show_warning(title, said, seconds=8)
        else:
            notify_literally(self, said, title=title, severity="warning", timeout=8)

    def leave_area(self) -> None:
        """Esc on an area's screen: go back to the screen the person came from, and close
        the one left, which stops its workers (its polling), as a screen taken off the
        stack does; one with work going on (F4's run) stays open, off the way back, until
        its key brings it back: Esc never stops a run."""
        area = self.current_mode
        if area == self.DEFAULT_MODE:  # no area's screen is in sight: nothing to close
            return
        left = self.screen
        going_on = left.work_going_on() if isinstance(left, AreaScreen) else None
        self._open_modes.remove(area)
        self.switch_mode(self._open_modes[-1])
        if going_on is None:
            self.remove_mode(area)
            return
        self._working_modes.add(area)
        key, title, _lead_only = AREA_SCREENS[area]
        self._say(
            f"{going_on} goes on", f"{key} shows it again ({title.lower()}); Ctrl+X there stops it."
        )


def screen_class_name(area: str) -> str:
    """The name of ``area``'s screen class, in ``reviewer/tui/screens/<area>.py``."""
    return f"{area.capitalize()}Screen"


def make_app(
    db_url_or_database: Database | str | None,
    annotator_name: str,
    *,
    kind: str | None = None,
    source: str | None = None,
    status: str | None = None,
    clock: Callable[[], datetime] | None = None,
    timer: ActiveTimer | None = None,
    notice: str | None = None,
    backend_settings: BackendSettings | None = None,
    flag: str | None = None,
    order: str = "default",
    search: str | None = None,
) -> ReviewApp:
    """Build the review app on a database (an open one, a path or a URL) for one annotator.

    ``annotator_name`` is the person ``db.identity.resolve_identity`` resolved (``vetbench
    review`` resolves it, refusing unknown names, and passes its ``notice`` to show).
    ``clock`` (claims) and ``timer`` (seconds spent) can be replaced for repeatable tests.
    ``backend_settings`` are how the evaluation screen opens models (as ``vetbench eval``
    takes them).  ``flag`` serves only items with that flag, ``search`` only items
    that match it (``db.search_query``'s syntax); ``order="suspicious"``
    serves the most suspicious items first (``reviewer.triage``).
    """
    db = (
        db_url_or_database
        if isinstance(db_url_or_database, Database)
        else open_database(db_url_or_database)
    )
    queue = annotator_queue(
        db,
        annotator_name,
        kind=kind,
        source=source,
        status=status,
        flag=flag,
        order=order,
        clock=clock,
        search=search,
    )
    kept: str | None = None
    if queue.filters == QueueFilter():  # no filter asked for: the one of the last session
        from reviewer.tui.screens.jump import remembered_filters

        if (remembered := remembered_filters(db, annotator_name)) is not None:
            queue.filters = remembered
            kept = f"your filter from last time is on: {remembered.describe()} (/ changes it)"
    return ReviewApp(
        db, queue, timer or ActiveTimer(), notice, backend_settings, filter_notice=kept
    )
