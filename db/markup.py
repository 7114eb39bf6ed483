"""HTML in item text: well-formed entities, decoded; markup tags, found.

CFLUE was scraped from web pages, so its text carries entities, often escaped
twice (``&amp;nbsp;``, ``&amp;lt;img src=...&amp;gt;``), and now and then an image
tag.  Two parts of vetbench read that: the display form people see
(``reviewer.display_text``, which decodes entities) and the ``html`` and
``needs-media`` flags (``db.flag_rules``), which report them.  Both use the one
entity rule here.

- Entities: only well-formed ones (``&name;``, ``&#123;``, ``&#x7b;``) count, so
  "R&D" or "AT&T" are text; decoding repeats until nothing changes (double escaping).
- Tags: an opening or closing tag of a known HTML element, also when the scrape
  glued the attribute to the name (``<imgsrc="...">``), in the decoded text.
  ``a<b`` or ``x < 3 > 2`` are not tags.
- Stylesheets: the text of a ``<style>`` element left behind when its tags were
  stripped, as Word's pasted HTML leaves it (``@font-face{font-family:"宋体";}``,
  ``p.MsoNormal{mso-style-name:正文;…}``): an at-rule, a Word ``mso-`` property, or
  a rule whose first declaration, of a known style property, ends in ``;``.
  LaTeX's ``\frac{a}{b}`` or ``\text{x}`` is not one.

Standard library only.
"""

from __future__ import annotations

import html
import html.entities
import re
from dataclasses import dataclass

MAX_ENTITY_ROUNDS = 4
"""Entities escaped more often than this are left as they are after this many decodings."""

ENTITY = re.compile(
    r"&(?:#(?P<decimal>[0-9]{1,7})|#[xX](?P<hex>[0-9a-fA-F]{1,6})|(?P<name>[A-Za-z][A-Za-z0-9]{1,31}));"
)
"""A well-formed HTML entity."""

_ELEMENTS = (
    "img|image|br|hr|p|div|span|table|thead|tbody|tr|td|th|sub|sup|b|i|u|em|strong|font|"
    "a|ul|ol|li|pre|code|h[1-6]|center|small|big|strike|s|svg|math|input|iframe|video|audio|"
    "source|embed|object|script|noscript|style|link|meta|base|form|button|textarea|select|"
    "option|label|blockquote|caption|tfoot|colgroup|col|dl|dt|dd|html|head|body|title|frame"
)
TAG = re.compile(
    rf"</?\s*(?P<element>{_ELEMENTS})"
    # closed at once (<br>, <br/>, </p>), or attributes with '=' (<img src="...">, and
    # <imgsrc="..."> as scrapes glue them): "A<B and C>D" is not a tag
    r"(?:\s*/?>|(?:\s+|(?=src|style|width|height|alt|class))[^<>]{0,2000}?=[^<>]{0,2000}>)",
    re.IGNORECASE,
)
"""An HTML tag (opening, closing or empty) of a known element, in decoded text."""

_STYLE_PROPERTIES = (
    r"mso-[a-z-]+|font(?:-[a-z]+)?|margin(?:-[a-z]+)?|padding(?:-[a-z]+)?|color|text-[a-z]+|"
    r"line-height|border(?:-[a-z]+)?|background(?:-[a-z]+)?|vertical-align|letter-spacing|page"
)
STYLESHEET = re.compile(
    r"(?P<at_rule>@(?:font-face|page|list|media|import|charset))\b"
    r"|(?<![\\\w-])(?P<word_property>mso-[a-z-]+)\s*:"
    # a rule, its first declaration ending in ';' ("{font: 12, color: red}" is a dict),
    # looked at but not taken: the declaration's own Word property is found too
    r"|(?<![\\\w])(?P<selector>[A-Za-z.#][\w.#-]*)\s*"
    rf"(?=\{{\s*(?:{_STYLE_PROPERTIES})\s*:[^{{}};]{{0,200}};)"
)
"""A piece of stylesheet text: an at-rule, a Word property, or a rule's selector."""

_MAY_HOLD_MARKUP = re.compile(r"[&<{@]|mso-")
"""What every entity, tag and piece of stylesheet text holds at least one of."""

IMAGE_ELEMENTS = frozenset({"img", "image", "svg", "video", "audio", "iframe", "embed", "object"})
"""Elements that stand for media the text itself does not hold."""


@dataclass(frozen=True)
class Markup:
    """What HTML a text holds: entities as written, and the elements of its tags."""

    entities: tuple[str, ...]  # distinct, in order of first appearance: "&amp;", "&nbsp;"
    elements: tuple[str, ...]  # distinct, lower-case: "img", "br"
    stylesheet: tuple[str, ...] = ()  # distinct: "@font-face", "p.MsoNormal", "mso-style-name"

    def __bool__(self) -> bool:
        return bool(self.entities or self.elements or self.stylesheet)

    @property
    def media_elements(self) -> tuple[str, ...]:
        return tuple(element for element in self.elements if element in IMAGE_ELEMENTS)


def decode_entities(text: str) -> str:
    """Well-formed HTML entities decoded, double escaping included (``&amp;lt;`` -> ``<``)."""
    for _ in range(MAX_ENTITY_ROUNDS):
        decoded = ENTITY.sub(_decode_entity, text)
        if decoded == text:
            break
        text = decoded
    return text


def _decode_entity(match: re.Match[str]) -> str:
    """One entity's character(s); an unknown name or an impossible number stays as written.

    Numbers are decoded as such, controls included (``&#27;`` is ESC, which a screen
    then shows as ``␛``): html.unescape would drop them silently.
    """
    if match["name"]:
        return html.entities.html5.get(match["name"] + ";", match.group())
    number = int(match["decimal"]) if match["decimal"] else int(match["hex"], 16)
    if 0 < number <= 0x10FFFF and not 0xD800 <= number <= 0xDFFF:
        return chr(number)
    return match.group()


def find_markup(text: str) -> Markup:
    """The entities ``text`` holds (those that decode to something), and the tags and
    stylesheet text it holds once decoded."""
    if not _MAY_HOLD_MARKUP.search(text):  # most text: answered without decoding
        return Markup((), ())
    entities: dict[str, None] = {}
    decoded = text
    for _ in range(MAX_ENTITY_ROUNDS):  # "&amp;nbsp;" holds &amp; and, once decoded, &nbsp;
        found = [m.group() for m in ENTITY.finditer(decoded) if _decode_entity(m) != m.group()]
        if not found:
            break
        entities.update(dict.fromkeys(found))
        decoded = ENTITY.sub(_decode_entity, decoded)
    elements: dict[str, None] = {}
    if "<" in decoded:
        for match in TAG.finditer(decoded):
            elements[match["element"].lower()] = None
    stylesheet: dict[str, None] = {}
    if "{" in decoded or "@" in decoded or "mso-" in decoded:
        for match in STYLESHEET.finditer(decoded):
            stylesheet[match["at_rule"] or match["word_property"] or match["selector"]] = None
    return Markup(tuple(entities), tuple(elements), tuple(stylesheet))
