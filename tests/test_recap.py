"""The recap of a finished game (recap.py, each game's recap.py): every figure of its cards equals
what is computed here again from the archived record, step by step, by other means (the engine's
states, the standings' figures, the bots' position value), for both games at every table size."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from conflictology import games, recap
from conflictology.bots.capitol_value import win_shares
from test_replay import random_record


def _leads(shares: list[float], winners: list[int]) -> bool:
    best = max(shares[w] for w in winners)
    return all(shares[i] < best for i in range(len(shares)) if i not in winners)


@pytest.mark.parametrize(("players", "seed"), [(p, s) for p in (2, 3, 4, 6, 10) for s in range(4)])
def test_capitol_recap_matches_the_archived_game(players: int, seed: int) -> None:
    record, states = random_record("capitol", players, seed)
    story = recap.build(record)
    game, final = games.get("capitol"), states[-1]
    assert story["id"] == record["id"] and story["players"] == record["players"]
    assert story["steps"] == len(record["actions"])
    winners = final.winners()
    assert story["winners"] == winners
    # The hands, every card face up: the winners' first, then the last one out first.
    order = [r["seat"] for r in story["reveal"]]
    assert order[: len(winners)] == winners and sorted(order) == list(range(players))
    out_at = {i: next((k for k, s in enumerate(states) if not s.alive[i]), len(states))
              for i in range(players)}  # fmt: skip
    rest = order[len(winners) :]
    assert [out_at[i] for i in rest] == sorted((out_at[i] for i in rest), reverse=True)
    for r in story["reveal"]:
        assert r["hidden"] == final.hidden[r["seat"]] and r["revealed"] == final.revealed[r["seat"]]
    # Bluffs and challenges: the standings' figures, and every challenge either won or lost.
    figures = game.figures(final)
    for mine, fig in zip(story["per_seat"], figures, strict=True):
        assert mine["bluffs"] == fig["bluffs"] and mine["bluffs_caught"] == fig["bluffs_caught"]
        assert mine["challenges_won"] == fig["challenges_won"]
        assert mine["challenges"] == mine["challenges_won"] + mine["challenges_lost"]
    challenges = sum(1 for e in final.view(None)["log"] if e["type"] == "challenge")
    assert sum(p["challenges"] for p in story["per_seat"]) == challenges
    caught = sum(p["bluffs_caught"] for p in story["per_seat"])
    assert caught == sum(p["challenges_won"] for p in story["per_seat"])
    # The biggest money swing: the largest change of one player's money in one step, the first of equals.
    moves = [(abs(b.money[i] - a.money[i]), -k, -i, b.money[i] - a.money[i])
             for k, (a, b) in enumerate(itertools.pairwise(states), start=1)
             for i in range(players)]  # fmt: skip
    size, step, seat, amount = max(moves)
    if size == 0:
        assert story["swing"] is None
    else:
        swing = story["swing"]
        assert (swing["step"], swing["seat"], swing["amount"]) == (-step, -seat, amount)
        assert swing["by"] == record["actions"][-step - 1]["seat"]
    # The decisive moment: the winners lead from it to the end, and did not just before (or led
    # from the deal and it raised their chance most).
    shares = [win_shares(s) for s in states]
    best = [max(s[w] for w in winners) for s in shares]
    assert story["chances"] == [round(100 * b) for b in best]
    decisive = story["decisive"]
    k = decisive["step"]
    assert decisive["seat"] == record["actions"][k - 1]["seat"]
    assert decisive["action"] == record["actions"][k - 1]["action"]
    assert (decisive["before"], decisive["after"]) == (round(100 * best[k - 1]), round(100 * best[k]))
    if all(_leads(s, winners) for s in shares):
        rises = [best[j] - best[j - 1] for j in range(1, len(best))]
        assert rises[k - 1] == max(rises)
    elif _leads(shares[-1], winners):
        assert all(_leads(s, winners) for s in shares[k:]) and not _leads(shares[k - 1], winners)
    entries = final.view(None)["log"]
    start, end = decisive["log"]
    assert 0 <= start < end <= len(entries)


def _round_winners(log: list[dict[str, Any]]) -> dict[int, int]:
    won: dict[int, int] = {}
    at = 0
    for e in log:
        if e["type"] == "reveal":
            at = e["round"]
            won[at] = -1
        elif e["type"] == "round_winner":
            won[at] = e["seat"]
    return won


@pytest.mark.parametrize("seed", range(12))
def test_conspiranoicos_recap_matches_the_archived_game(seed: int) -> None:
    record, states = random_record("conspiranoicos", 2, seed)
    story = recap.build(record)
    game, final = games.get("conspiranoicos"), states[-1]
    result = final.result  # type: ignore[attr-defined]
    assert story["winners"] == final.winners() == list(result.winners)
    assert story["totals"] == [f["points"] for f in game.figures(final)]
    assert story["decided_by"] == result.decided_by
    detail = {c["criterion"]: c["points"] for c in result.detail()["criteria"]}
    assert {c["criterion"]: c["points"] for c in story["criteria"]} == detail
    for p in (0, 1):
        assert sum(c["points"][p] for c in story["criteria"]) == story["totals"][p]
    ids = final.deck.ids  # type: ignore[attr-defined]
    rows = {r["seat"]: r["row"] for r in story["reveal"]}
    assert rows == {p: [ids[c] for c in final.rows[p]] for p in (0, 1)}  # type: ignore[attr-defined]
    assert story["reveal"][0]["seat"] == story["winners"][0]
    log = game.open_view(final)["log"]
    won = _round_winners(log)
    assert [(r["round"], r["winner"]) for r in story["rounds"]] == sorted(won.items())
    fc = story["final_challenge"]
    assert fc["card"] == ids[final.final] and fc["winner"] == won[6]  # type: ignore[attr-defined]
    assert [f["final_challenges"] for f in game.figures(final)] == [int(fc["winner"] == p) for p in (0, 1)]
    assert fc["plays"] == story["rounds"][-1]["plays"]
    # Each round's evidence as it stood: the zones after it, laid out as the final rows lay them out.
    for r in story["rounds"]:
        assert len(r["score"]) == 2 and all(0 <= x <= 14 for x in r["score"])
    # After round 6 the evidence is all there: unless a special card swapped one with the Pyramid in
    # Sort Evidence, it is the final rows, and it scores what the game scored.
    if not any(e["type"] in ("abduct", "reveal_gnome") for e in log):
        assert story["rounds"][-1]["round"] == 6 and story["rounds"][-1]["score"] == story["totals"]
    decisive = story["decisive"]
    if len(story["winners"]) > 1:
        assert decisive is None
        return
    w = story["winners"][0]
    ahead = [r["score"][w] > r["score"][1 - w] for r in story["rounds"]]
    ahead.append(story["totals"][w] > story["totals"][1 - w])
    if decisive["round"] is not None:
        k = decisive["round"] - 1
        assert all(ahead[k:]) and (k == 0 or not ahead[k - 1])
    elif decisive["at"] == "sort":
        assert ahead[-1] and not ahead[-2]
    else:
        assert not ahead[-1] and decisive["at"] == result.decided_by


def test_a_game_not_over_has_no_recap() -> None:
    record, _ = random_record("capitol", 3, 1)
    record["actions"] = record["actions"][:5]
    with pytest.raises(ValueError, match="finished game"):
        recap.build(record)
