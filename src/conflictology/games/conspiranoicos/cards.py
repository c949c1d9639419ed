"""Evidence cards and decks: loading a deck file and refusing a malformed one.

The rulebook describes a card (value, front faction symbols, challenge, back) but never lists the
18 cards, so the deck is data (``decks/default.json``, docs/rules/conspiranoicos.md "The cards"); a room
may load another deck file with the ``deck_file`` option. A deck is checked in full when it is
loaded: an error names the file, the card and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypedDict

# The four factions; the rulebook names only the Gnomes, the rulings name the rest (G, I, A, R).
FACTIONS: tuple[str, ...] = ("G", "I", "A", "R")
FACTION_NAMES: dict[str, str] = {"G": "Gnomes", "I": "Illuminati", "A": "Aliens", "R": "Reptilians"}

# The three special cards (rulebook "Special Cards").
ABDUCTION = "abduction"
GNOME_REVELATION = "gnome_revelation"
ALL_SEEING_EYE = "all_seeing_eye"
SPECIALS: dict[str, str] = {
    ABDUCTION: "Abduction",
    GNOME_REVELATION: "Gnome Revelation",
    ALL_SEEING_EYE: "The All-Seeing Eye",
}

DECK_SIZE = 18  # three piles of six (rulebook "Setup")
MIN_VALUE, MAX_VALUE = 0, 7  # "Value: 0-7" (rulebook "Evidence Cards")

# Challenge conditions (rulings "A round", step 2): comparisons pick the strictly better card,
# yes/no conditions the player who alone meets them.
COMPARISONS: dict[str, str] = {
    "highest_value": "Highest value",
    "lowest_value": "Lowest value",
    "most_symbols": "Most faction symbols",
    "fewest_symbols": "Fewest faction symbols",
}
CONDITIONS: dict[str, str] = {
    "even_value": "Even value",
    "odd_value": "Odd value",
    "shows_own_back": "Front shows its own back's faction",
    **{f"shows_{f}": f"Shows {FACTION_NAMES[f]} ({f})" for f in FACTIONS},
}
CHALLENGES: dict[str, str] = {**COMPARISONS, **CONDITIONS}

_CARD_FIELDS = {"id", "name", "value", "front", "back", "challenge", "special"}
_DECK_FIELDS = {"name", "title", "notes", "cards"}
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_BUNDLED_RE = re.compile(r"^[a-z0-9_-]+$")


class CardData(TypedDict):
    """A card's public data, as a view's ``cards`` catalogue lists it."""

    id: str
    name: str
    value: int
    front: list[str]
    back: str
    challenge: str
    challenge_text: str
    special: str | None


class DeckError(ValueError):
    """A deck file that cannot be used; the message names the card and the field."""


@dataclass(frozen=True, slots=True)
class Card:
    id: str
    name: str
    value: int
    front: tuple[str, ...]
    back: str
    challenge: str
    special: str | None

    @property
    def challenge_text(self) -> str:
        return CHALLENGES[self.challenge]

    def to_dict(self) -> CardData:
        return {
            "id": self.id,
            "name": self.name,
            "value": self.value,
            "front": list(self.front),
            "back": self.back,
            "challenge": self.challenge,
            "challenge_text": self.challenge_text,
            "special": self.special,
        }


class Deck:
    """An immutable, validated deck: the cards and the fast per-index tables the rules use."""

    __slots__ = (
        "_catalogue",
        "abduction",
        "backs",
        "cards",
        "data",
        "eye",
        "fronts",
        "gnome",
        "ids",
        "index",
        "key",
        "name",
        "specials",
        "values",
    )

    def __init__(self, name: str, cards: Sequence[Card], data: dict[str, Any]) -> None:
        self.name = name
        self.cards: tuple[Card, ...] = tuple(cards)
        self.data = data  # the normalised JSON form, carried by to_json
        self.key = json.dumps(data, sort_keys=True, separators=(",", ":"))
        self.ids: tuple[str, ...] = tuple(c.id for c in cards)
        self.index: dict[str, int] = {c.id: i for i, c in enumerate(cards)}
        self.values: tuple[int, ...] = tuple(c.value for c in cards)
        self.fronts: tuple[tuple[str, ...], ...] = tuple(c.front for c in cards)
        self.backs: tuple[str, ...] = tuple(c.back for c in cards)
        self.specials: tuple[str | None, ...] = tuple(c.special for c in cards)

        def find(kind: str) -> int:
            return next((i for i, c in enumerate(cards) if c.special == kind), -1)

        self.abduction = find(ABDUCTION)
        self.gnome = find(GNOME_REVELATION)
        self.eye = find(ALL_SEEING_EYE)
        self._catalogue = [c.to_dict() for c in cards]

    def catalogue(self) -> list[CardData]:
        """Every card's public data (the deck's contents are public knowledge), a fresh copy."""
        return [{**c, "front": c["front"][:]} for c in self._catalogue]


def _fail(source: str, where: str, field: str, problem: str) -> DeckError:
    return DeckError(f"deck {source}: {where}: field {field!r}: {problem}")


def parse_deck(data: Any, source: str = "<data>") -> Deck:
    """Check a deck's JSON data in full and build the :class:`Deck`; raises :class:`DeckError`."""
    if not isinstance(data, Mapping):
        raise DeckError(f"deck {source}: must be a JSON object with a 'cards' list")
    unknown = sorted(set(data) - _DECK_FIELDS)
    if unknown:
        raise DeckError(f"deck {source}: unknown field(s) {', '.join(unknown)}")
    name = data.get("name", source)
    if not isinstance(name, str) or not name:
        raise DeckError(f"deck {source}: field 'name' must be a non-empty string")
    raw_cards = data.get("cards")
    if not isinstance(raw_cards, list):
        raise DeckError(f"deck {source}: field 'cards' must be a list of {DECK_SIZE} cards")
    cards: list[Card] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(raw_cards, start=1):
        cards.append(_parse_card(raw, n, source, seen))
    if len(cards) != DECK_SIZE:
        raise DeckError(f"deck {source}: field 'cards' has {len(cards)} cards; the game needs {DECK_SIZE}")
    for kind, title in SPECIALS.items():
        holders = [c.id for c in cards if c.special == kind]
        if len(holders) > 1:
            raise _fail(
                source, f"card {holders[1]!r}", "special", f"a second {title} (already {holders[0]!r})"
            )
    normal = {
        "name": name,
        "cards": [{k: v for k, v in c.to_dict().items() if k != "challenge_text"} for c in cards],
    }
    return Deck(name, cards, normal)


def _parse_card(raw: Any, n: int, source: str, seen: dict[str, int]) -> Card:
    where = f"card #{n}"
    if not isinstance(raw, Mapping):
        raise DeckError(f"deck {source}: {where}: must be an object")
    cid = raw.get("id")
    if not isinstance(cid, str) or not _ID_RE.match(cid):
        raise _fail(source, where, "id", f"must be 1–32 letters, digits, '_' or '-', got {cid!r}")
    if cid in FACTIONS:
        # A view shows a hidden card as its back symbol, so an id must never look like one.
        raise _fail(source, where, "id", f"{cid!r} is a faction symbol, not a card id")
    where = f"card {cid!r} (#{n})"
    if cid in seen:
        raise _fail(source, where, "id", f"duplicate of card #{seen[cid]}")
    seen[cid] = n
    unknown = sorted(set(raw) - _CARD_FIELDS)
    if unknown:
        raise _fail(source, where, unknown[0], f"unknown field; known: {', '.join(sorted(_CARD_FIELDS))}")
    value = raw.get("value")
    if not isinstance(value, int) or isinstance(value, bool) or not MIN_VALUE <= value <= MAX_VALUE:
        raise _fail(source, where, "value", f"must be an integer {MIN_VALUE}–{MAX_VALUE}, got {value!r}")
    special = raw.get("special")
    if special is not None and special not in SPECIALS:
        raise _fail(
            source, where, "special", f"must be null or one of {', '.join(SPECIALS)}, got {special!r}"
        )
    front = raw.get("front")
    if not isinstance(front, list) or not all(isinstance(s, str) for s in front):
        raise _fail(source, where, "front", f"must be a list of faction symbols, got {front!r}")
    if len(front) > 2:
        raise _fail(source, where, "front", f"at most two symbols, got {len(front)}")
    bad = [s for s in front if s not in FACTIONS]
    if bad:
        raise _fail(source, where, "front", f"{bad[0]!r} is not a faction (G, I, A, R)")
    if len(set(front)) != len(front):
        raise _fail(source, where, "front", "a symbol is repeated")
    if special is not None and front:
        # Rulebook "Special Cards": they have no faction symbol on the front.
        raise _fail(source, where, "front", "a special card has no faction symbol")
    back = raw.get("back")
    if back not in FACTIONS:
        raise _fail(source, where, "back", f"must be one faction symbol (G, I, A, R), got {back!r}")
    challenge = raw.get("challenge")
    if challenge not in CHALLENGES:
        raise _fail(source, where, "challenge", f"must be one of {', '.join(CHALLENGES)}, got {challenge!r}")
    name = raw.get("name", SPECIALS[special] if special else cid)
    if not isinstance(name, str) or not name:
        raise _fail(source, where, "name", f"must be a non-empty string, got {name!r}")
    return Card(cid, name, value, tuple(front), str(back), str(challenge), special)


_cache: dict[str, Deck] = {}


def bundled_decks() -> list[str]:
    """Names of the decks shipped in the package (``decks/<name>.json``)."""
    folder = resources.files(__package__).joinpath("decks")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".json"))


def load_deck(deck_file: str | None) -> Deck:
    """The bundled default (None), a bundled deck by name, or a JSON deck file by path."""
    name = "default" if deck_file is None else deck_file
    if not isinstance(name, str) or not name:
        raise DeckError(f"deck_file must be null, a bundled deck name or a path, got {deck_file!r}")
    cached = _cache.get(name)
    if cached is not None:
        return cached
    if _BUNDLED_RE.match(name) and name in bundled_decks():
        text = resources.files(__package__).joinpath("decks", f"{name}.json").read_text("utf-8")
        source = f"{name!r} (bundled)"
        deck = parse_deck(_parse_json(text, source), source)
        _cache[name] = deck  # bundled decks never change while the process runs
        return deck
    path = Path(name)
    if not path.is_file():
        raise DeckError(
            f"deck_file {name!r}: no bundled deck of that name "
            f"({', '.join(bundled_decks())}) and no such file"
        )
    source = str(path)
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DeckError(f"deck {source}: cannot be read: {exc}") from exc
    # A file on disk may change between games, so it is read afresh each time.
    return parse_deck(_parse_json(text, source), source)


def deck_from_data(data: Any) -> Deck:
    """A deck from its normalised JSON form (as ``to_json`` and views carry it), cached by content."""
    key = json.dumps(data, sort_keys=True, separators=(",", ":"))
    for deck in _cache.values():
        if deck.key == key:
            return deck
    deck = parse_deck(data, "<saved game>")
    _cache[f"\0{key}"] = deck
    return deck


def _parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DeckError(f"deck {source}: not valid JSON: {exc}") from exc
