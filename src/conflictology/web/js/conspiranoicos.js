// The Conspiranoicos table: the challenge card, both hands (backs for the opponent's), the round's
// plays, the Pyramid (3-2-1), the scoring zones, the rows of Sort Evidence and the score breakdown.
import { evidenceBack, evidenceCard, factionBadge, plainBack } from './cards.js';
import { h } from './dom.js';
import { has, t } from './i18n.js';
import { presenceTag } from './presence.js';
import { preview } from './rowscore.js';
// The deck in play comes with every view: `cards`, the catalogue of its 18 cards (id, value, fronts,
// back, challenge and its English text, special). The deck's contents are public, and a room may load
// another deck file (option deck_file), so the client keeps no copy of its own.
let byId = new Map();
let loaded = null;

export function catalogue(view) {
  const cards = view && view.cards;
  if (!Array.isArray(cards) || cards === loaded) return;
  loaded = cards;
  byId = new Map(cards.filter((card) => card && card.id).map((card) => [card.id, card]));
}

export function cardInfo(id) { return byId.get(id) || { id, value: '?', front: [], back: null, challenge: '' }; }

function faction(f) { return t(`conspiranoicos.factions.${f}`); }

// A challenge in the reader's language; the engine's English text (`fallback`) for one it does not know.
export function challengeText(key, fallback = '') {
  if (!key) return '';
  const shows = /^shows_([GIAR])$/.exec(key);
  if (shows) return t('conspiranoicos.challenges.shows', { faction: faction(shows[1]) });
  const k = `conspiranoicos.challenges.${key}`;
  return has(k) ? t(k) : fallback || key;
}

function cardChallenge(card) { return challengeText(card.challenge, card.challenge_text); }

function cardName(card) {
  return card.special ? t(`conspiranoicos.specials.${card.special}`) : '';
}

function describe(card) {
  const fronts = (card.front || []).map(faction).join(' + ');
  const name = cardName(card);
  return `${name ? name + ', ' : ''}${t('conspiranoicos.value', { n: card.value })}${fronts ? ', ' + fronts : ''}. ${cardChallenge(card)}`;
}

function face(id, opts = {}) {
  const card = cardInfo(id);
  return evidenceCard(card, { name: cardName(card), challenge: cardChallenge(card) }, { ...opts, label: describe(card) });
}

function back(sym, opts = {}) {
  return sym ? evidenceBack(sym, t('conspiranoicos.backOf', { faction: faction(sym) }), opts) : plainBack(t('conspiranoicos.hidden'), opts);
}

// A hand/row/zone item is a card id (known front) or a back symbol (one letter).
function item(x, opts) {
  if (x === null || x === undefined) return plainBack(t('conspiranoicos.hidden'), opts);
  if (typeof x === 'object') return x.card ? face(x.card, opts) : back(x.back, opts);
  return /^[GIAR]$/.test(x) ? back(x, opts) : face(x, opts);
}

function types(legal) { return new Set(legal.map((a) => a.type)); }

function other(c) {
  const n = (c.view.players || []).length || 2;
  return c.you === null || c.you === undefined ? 1 : (c.you + 1) % n;
}

export function banner(c) {
  const v = c.view;
  catalogue(v);
  const ty = types(c.legal);
  if (Array.isArray(v.scores) && v.scores.length && !c.legal.length) {
    const winners = v.winners || [];
    const me = c.you !== null && c.you !== undefined ? c.you : -1;
    if (me >= 0 && winners.includes(me)) {
      return { tone: 'over', text: t(winners.length > 1 ? 'conspiranoicos.banner.overShared' : 'conspiranoicos.banner.overYou',
        { a: v.scores[me], b: v.scores[1 - me] }) };
    }
    const names = winners.map((s) => c.name(s)).join(' & ');
    return { tone: 'over', text: t('conspiranoicos.banner.over', { names, a: Math.max(...v.scores), b: Math.min(...v.scores) }) };
  }
  if (ty.has('play')) {
    const ch = v.challenge ? cardChallenge(cardInfo(v.challenge)) : null;
    return { tone: 'decision', text: v.round >= 6 || !v.challenge ? t('conspiranoicos.banner.playFinal')
      : t('conspiranoicos.banner.play', { round: v.round, challenge: ch }) };
  }
  if (ty.has('send')) return { tone: 'decision', text: t('conspiranoicos.banner.send') };
  if (ty.has('keep')) return { tone: 'threat', text: t('conspiranoicos.banner.keep', { winner: c.name(other(c)) }) };
  if (ty.has('abduct')) return { tone: 'decision', text: t('conspiranoicos.banner.abduct') };
  if (ty.has('reveal_gnome')) return { tone: 'decision', text: t('conspiranoicos.banner.gnome') };
  if (ty.has('place')) {
    const row = (v.players[c.you] && v.players[c.you].row) || [];
    return { tone: 'decision', text: t('conspiranoicos.banner.place', { n: (Array.isArray(row) ? row.length : row) + 1 }) };
  }
  if (c.legal.length) return { tone: 'decision', text: t('conspiranoicos.banner.choose') };
  const p = v.pending || {};
  const phase = p.phase || '';
  if (c.you === null || c.you === undefined) {
    const names = (p.awaiting || []).map((x) => c.name(x)).join(', ');
    return { tone: 'wait', text: t('conspiranoicos.banner.watch', { round: Math.min(v.round || 1, 6), names }) };
  }
  if (phase && has(`conspiranoicos.phases.${phase}`)) {
    return { tone: 'wait', text: t(`conspiranoicos.phases.${phase}`, { name: c.name(other(c)) }) };
  }
  return { tone: 'wait', text: t('conspiranoicos.banner.waiting', { name: c.name(other(c)) }) };
}

// ---- the table --------------------------------------------------------------------------------------

export function renderTable(c) {
  const v = c.view;
  catalogue(v);
  const players = v.players || [];
  const me = c.you !== null && c.you !== undefined ? c.you : 0;
  const opp = other(c);
  const spectator = c.you === null || c.you === undefined;
  // Arranging the row: the arranger (in the controls) comes first and holds one's hand (17.8).
  const arranging = !spectator && types(c.legal).has('place');
  // As at the Capitol table, the decision's sheet and one's own side share the dock (style.css).
  return h('div', { class: ['consp-table', arranging && 'arranging'] },
    playerArea(c, players[opp], opp, 'opp'),
    h('section', { class: 'middle', 'aria-label': t('conspiranoicos.middle') },
      challengeArea(c), sorting(v) ? h('div', { class: 'table-area' }) : tableArea(c), pyramidArea(c)),
    spectator ? playerArea(c, players[me], me, 'opp') : null,
    logPanel(c),
    spectator ? null : h('div', { class: ['dock', c.legal.length && 'deciding'] }, controls(c), playerArea(c, players[me], me, 'mine')));
}

function sorting(v) { return !!v.phase && !['play', 'send', 'keep'].includes(v.phase); }

function challengeArea(c) {
  const v = c.view;
  const round = Math.min(v.round || 1, 6);
  const final = round >= 6;
  const sorting = v.phase && !['play', 'send', 'keep'].includes(v.phase);
  if (sorting) {
    const ps = v.pyramid_symbols;
    return h('div', { class: 'challenge-area' },
      h('h3', null, t('conspiranoicos.sortEvidence')),
      ps ? h('div', { class: 'symbols' },
        h('p', { class: 'small' }, t('conspiranoicos.symbolsT')),
        h('div', { class: 'row' }, (ps.T || []).map((f) => factionBadge(f, faction(f)))),
        h('p', { class: 'small' }, t('conspiranoicos.symbolS')),
        h('div', { class: 'row' }, ps.S ? factionBadge(ps.S, faction(ps.S)) : '—')) : null);
  }
  return h('div', { class: 'challenge-area' },
    h('h3', null, final ? t('conspiranoicos.finalChallenge') : t('conspiranoicos.round', { n: round })),
    v.challenge ? face(v.challenge) : plainBack(t('conspiranoicos.finalHidden')),
    h('p', { class: 'muted small' }, final ? t('conspiranoicos.finalRule') : t('conspiranoicos.deckLeft', { n: v.challenge_deck ?? '?' })));
}

function tableArea(c) {
  const v = c.view;
  const table = v.table || {};
  const plays = table.plays || [];
  const ty = types(c.legal);
  const choosing = ty.has('send') || ty.has('keep');
  const pending = v.pending || {};
  const submitted = pending.submitted || [];
  const slots = [];
  for (let s = 0; s < Math.max(2, plays.length); s += 1) {
    const x = plays[s];
    let inner;
    if (x === null || x === undefined) {
      inner = h('div', { class: ['empty-card', submitted[s] && 'ready'] });
    } else inner = item(x, { small: true });
    slots.push(h('div', { class: ['play-slot', table.winner === s && 'winner'] },
      h('span', { class: 'slot-label' }, s === c.you ? t('common.you') : c.name(s)), inner));
  }
  // The challenge card is the round's third card: the winner may take it too.
  if (choosing && v.challenge && (table.remaining || []).includes(v.challenge)) {
    slots.push(h('div', { class: 'play-slot' }, h('span', { class: 'slot-label' }, t('conspiranoicos.challengeCard')), item(v.challenge, { small: true })));
  }
  const moves = (table.moves || []).map((m) => h('li', null, t(m.to === 'pyramid' ? 'conspiranoicos.movedPyramid' : 'conspiranoicos.movedZone', {
    card: describeShort(m.card), name: m.zone === null || m.zone === undefined ? '' : c.name(m.zone) })));
  return h('div', { class: 'table-area', role: 'group', 'aria-label': t('conspiranoicos.plays') },
    h('h3', null, t('conspiranoicos.plays')),
    h('div', { class: 'plays' }, slots),
    table.winner !== null && table.winner !== undefined
      ? h('p', { class: 'small winner-line' }, table.winner === c.you ? t('conspiranoicos.roundWinnerYou')
        : t('conspiranoicos.roundWinner', { name: c.name(table.winner) }),
        table.decided_by ? ` (${t(`conspiranoicos.by.${table.decided_by}`)})` : '') : null,
    moves.length ? h('ul', { class: 'moves small muted' }, moves) : null);
}

// A card the round's winner (send) or loser (keep) may pick.
function choiceCard(c, id) {
  const ty = types(c.legal);
  const kind = ty.has('send') ? 'send' : 'keep';
  const ok = c.legal.some((a) => a.type === kind && a.card === id);
  const on = c.ui.card === id;
  if (!ok) return h('span', { class: 'card-static dim' }, face(id, { small: true }));
  return h('button', {
    type: 'button', class: ['card-btn', 'pick', on && 'on'], 'aria-pressed': String(on), disabled: c.busy, 'data-k': `pick-${id}`,
    'data-card': id,
    onclick: () => {
      if (kind === 'keep') c.act(c.legal.find((a) => a.type === 'keep' && a.card === id));
      else { c.ui.card = id; c.rerender(); }
    },
  }, face(id));
}

// A Pyramid slot's card as the table shows it: face up, face down (with what both players saw of it),
// or empty.
function slotArt(x, n, opts = { small: true }) {
  if (!x) return h('div', { class: 'empty-card', role: 'img', 'aria-label': t('conspiranoicos.emptySlot', { n }) });
  if (x.card) return face(x.card, opts);
  // Face down on the table, but both players saw it arrive (views.py: "seen").
  const down = back(x.back, opts);
  if (!x.seen) return down;
  const seen = cardInfo(x.seen);
  down.setAttribute('aria-label', t('conspiranoicos.seenDown', { card: describe(seen) }));
  // The card as both players saw it: its value and front symbols on the face-down back.
  return h('span', { class: 'seen-wrap', title: t('conspiranoicos.seenDown', { card: describeShort(x.seen) }) }, down,
    h('span', { class: 'seen', 'aria-hidden': 'true' }, String(seen.value),
      (seen.front || []).map((f) => factionBadge(f, faction(f)))));
}

// The Abduction's or the Gnome Revelation's choice of a slot (the sheet shows them: pyramidChoices).
function slotChoice(c, n) {
  const ty = types(c.legal);
  if (ty.has('abduct')) return c.legal.find((a) => a.type === 'abduct' && a.slot === n) || null;
  if (ty.has('reveal_gnome')) return c.legal.find((a) => a.type === 'reveal_gnome' && a.slot === n) || null;
  return null;
}

function pyramidArea(c) {
  const v = c.view;
  const pyr = v.pyramid || [null, null, null, null, null, null];
  const slot = (i) => {
    const x = pyr[i];
    const n = i + 1;
    return h('div', { class: ['pyr-slot', x && x.face_up && 'up', slotChoice(c, n) && 'choosable'], 'data-slot': n },
      slotArt(x, n), h('span', { class: 'slot-num' }, String(n)));
  };
  return h('div', { class: 'pyramid-area', role: 'group', 'aria-label': t('conspiranoicos.pyramid') },
    h('h3', null, t('conspiranoicos.pyramid')),
    h('div', { class: 'pyramid' },
      h('div', { class: 'pyr-row top' }, slot(5)),
      h('div', { class: 'pyr-row mid' }, slot(3), slot(4)),
      h('div', { class: 'pyr-row bottom' }, slot(0), slot(1), slot(2))));
}

// The slots one may choose, in the sheet beside one's hand (the Pyramid itself may be out of sight).
function pyramidChoices(c) {
  const pyr = c.view.pyramid || [];
  const abduct = types(c.legal).has('abduct');
  const slots = [1, 2, 3, 4, 5, 6].filter((n) => slotChoice(c, n));
  return h('div', { class: 'hand slot-choices' }, slots.map((n) => h('button', {
    type: 'button', class: 'card-btn pick', disabled: c.busy, 'data-k': `slot-${n}`,
    'aria-label': t(abduct ? 'conspiranoicos.abductSlot' : 'conspiranoicos.gnomeSlot', { n }),
    onclick: () => c.act(slotChoice(c, n)),
  }, slotArt(pyr[n - 1], n), h('span', { class: 'card-cap' }, String(n)))));
}

// The cards on the table the round's winner may send, or its loser keep, in the sheet.
function tableChoices(c) {
  const v = c.view;
  const table = v.table || {};
  const ids = (table.plays || []).filter((x) => x !== null && x !== undefined);
  if (v.challenge && (table.remaining || []).includes(v.challenge)) ids.push(v.challenge);
  return h('div', { class: 'hand table-choices' }, ids.map((id) => choiceCard(c, id)));
}

function playerArea(c, pl, seat, kind) {
  if (!pl) return null;
  const mine = kind === 'mine';
  // While rows are built another's hand is a count (its backs would tell which card was placed).
  const hand = Array.isArray(pl.hand) ? pl.hand : [];
  const zone = pl.zone || [];
  const row = pl.row;
  const ty = types(c.legal);
  const handItems = typeof pl.hand === 'number'
    ? Array.from({ length: pl.hand }, (_, i) => h('span', { class: 'card-static', 'data-k': `h-${i}` }, plainBack(t('conspiranoicos.hand'), { small: true })))
    : hand.map((x, i) => {
    if (mine && ty.has('play')) {
      const kindAct = 'play';
      const a = c.legal.find((l) => l.type === kindAct && l.card === x);
      return h('button', { type: 'button', class: ['card-btn', kindAct], disabled: !a || c.busy, 'data-k': `hand-${x}`,
        'data-card': x, onclick: () => c.act(a) }, item(x), h('span', { class: 'card-cap' }, t(`conspiranoicos.verbs.${kindAct}`)));
    }
    return h('span', { class: 'card-static', 'data-k': `h-${i}` }, item(x, { small: !mine }));
  });
  const rowItems = Array.isArray(row) ? row.map((x) => item(x, { small: true }))
    : Array.from({ length: row || 0 }, () => plainBack(t('conspiranoicos.placed'), { small: true }));
  const scores = c.view.score_detail;
  // One's own side is "Your hand" (a labelled region); while the row is arranged the hand is the
  // arranger's, in the sheet, and this side holds the zone alone.
  const label = !mine ? c.name(seat) : ty.has('place') ? t('conspiranoicos.yourSide') : t('common.yourHand');
  return h('section', { class: ['consp-player', mine ? 'mine' : 'theirs'], role: mine ? 'region' : null, 'aria-label': label, 'data-seat': seat },
    h('header', null,
      h('span', { class: 'pname', title: mine ? `${c.name(seat)} (${t('common.you')})` : c.name(seat) }, mine ? `${c.name(seat)} (${t('common.you')})` : c.name(seat)),
      h('span', { class: 'tag' }, t('conspiranoicos.drawLeft', { n: pl.draw === undefined ? '?' : pl.draw })),
      presenceTag(c.room, seat),
      Array.isArray(c.view.scores) && c.view.scores.length ? h('span', { class: 'tag score' }, t('conspiranoicos.points', { n: c.view.scores[seat] })) : null),
    h('div', { class: 'zones' },
      mine && ty.has('place') ? null
        : h('div', { class: 'zone-block hand-block' }, h('h4', null, t('conspiranoicos.hand')), h('div', { class: 'hand' }, handItems.length ? handItems : h('span', { class: 'muted' }, '—'))),
      sorting(c.view) && !zone.length ? null
        : h('div', { class: 'zone-block' }, h('h4', null, t('conspiranoicos.zone')), h('div', { class: 'hand zone' }, zone.length ? zone.map((x) => item(x, { small: true })) : h('span', { class: 'muted' }, '—'))),
      (rowItems.length || (Array.isArray(row) && ty.has('place'))) && !(mine && ty.has('place'))
        ? h('div', { class: 'zone-block' }, h('h4', null, t('conspiranoicos.row')), h('div', { class: 'hand row-cards' }, rowItems)) : null),
    scores ? null : null);
}

function controls(c) {
  const ty = types(c.legal);
  if (!c.legal.length) return null;
  const box = h('section', { class: 'controls', role: 'region', 'aria-label': t('common.yourMove') });
  if (ty.has('send')) {
    const id = c.ui.card;
    const options = c.legal.filter((a) => a.type === 'send' && a.card === id);
    box.appendChild(h('p', { class: 'hint' }, id ? t('conspiranoicos.sendWhere', { card: describe(cardInfo(id)) }) : t('conspiranoicos.pickToSend')));
    box.appendChild(tableChoices(c));
    box.appendChild(h('div', { class: 'row send-row' },
      ['pyramid', 'zone'].map((to) => {
        const a = options.find((o) => o.to === to);
        return h('button', { type: 'button', class: to === 'pyramid' ? 'secondary' : 'primary', disabled: !a || c.busy,
          'data-k': `send-${to}`, onclick: () => c.act(a) }, t(`conspiranoicos.sendTo.${to}`));
      })));
  } else if (ty.has('keep')) {
    box.appendChild(h('p', { class: 'hint' }, t('conspiranoicos.pickToKeep')));
    box.appendChild(tableChoices(c));
  } else if (ty.has('abduct') || ty.has('reveal_gnome')) {
    box.appendChild(h('p', { class: 'hint' }, t(ty.has('abduct') ? 'conspiranoicos.abductHint' : 'conspiranoicos.gnomeHint')));
    box.appendChild(pyramidChoices(c));
    const pass = c.legal.find((a) => a.type === 'pass');
    if (pass) box.appendChild(h('button', { type: 'button', class: 'secondary', disabled: c.busy, 'data-k': 'act-pass', onclick: () => c.act(pass) }, t('conspiranoicos.noSwap')));
  } else if (ty.has('place')) {
    box.appendChild(arranger(c));
  } else if (ty.has('play')) {
    box.appendChild(h('p', { class: 'hint' }, t('conspiranoicos.playHint')));
  }
  const known = new Set(['play', 'send', 'keep', 'abduct', 'reveal_gnome', 'place', 'pass']);
  const unknown = c.legal.filter((a) => !known.has(a.type));
  if (unknown.length) {
    box.appendChild(h('div', { class: 'row' }, unknown.map((a, i) => h('button', { type: 'button', class: 'secondary', 'data-k': `unk-${i}`, onclick: () => c.act(a) }, a.type))));
  }
  return box;
}

// ---- arranging the row (17.8) -----------------------------------------------------------------------
// The whole row is arranged at once: tap a card, then another, to swap them; a preview measures the
// row by each criterion (one's own cards only: js/rowscore.js); Confirm places the cards one by one,
// left to right (one `place` action each, as the rules engine takes them). Cards already placed (a
// clock that ran out places the first card of the hand) stay where they are. Kept across the state
// messages of the placing, so it lives here rather than in the per-decision `c.ui`.
let arrangement = { key: '', order: [], picked: null, queue: [], sent: null, retry: null };

function arranger(c) {
  const v = c.view;
  const me = v.players[c.you] || {};
  const placed = Array.isArray(me.row) ? me.row : [];
  const hand = Array.isArray(me.hand) ? me.hand : [];
  const key = [...placed, ...hand].sort().join();
  if (arrangement.key !== key) arrangement = { key, order: [...placed, ...hand], picked: null, queue: [], sent: null, retry: null };
  const order = [...placed, ...arrangement.order.filter((id) => !placed.includes(id))];
  arrangement.order = order;
  sendQueued(c, placed);
  const sending = arrangement.queue.length > 0;
  const pick = (i) => {
    const a = arrangement;
    if (a.picked === null) a.picked = i;
    else if (a.picked === i) a.picked = null;
    else {
      [a.order[a.picked], a.order[i]] = [a.order[i], a.order[a.picked]];
      a.picked = null;
    }
    c.rerender();
  };
  const cards = order.map((id, i) => {
    const fixed = i < placed.length;
    const on = arrangement.picked === i;
    return h('button', {
      type: 'button', class: ['card-btn', 'arr', on && 'on', fixed && 'placed'], disabled: fixed || sending || c.busy,
      'aria-pressed': String(on), 'data-k': `arr-${i}`, 'data-card': id,
      'aria-label': t(fixed ? 'rowPlan.placedAt' : 'rowPlan.at', { n: i + 1, card: describe(cardInfo(id)) }),
      onclick: () => pick(i),
    }, face(id, { small: true }), h('span', { class: 'card-cap' }, String(i + 1)));
  });
  const ps = v.pyramid_symbols || {};
  const p = preview(order.map(cardInfo), ps.T || [], ps.S || '', {
    gained: v.gained || [], anyOrder: !!(v.options && v.options.sequence_any_order) });
  const pts = (n) => (n === 1 ? t('rowPlan.onePoint') : t('conspiranoicos.points', { n }));
  const line = (key, measure, points) => h('tr', { 'data-criterion': key, 'data-measure': String(measure) },
    h('th', { scope: 'row' }, t(`conspiranoicos.criteria.${key}`)),
    h('td', null, measure), h('td', null, points));
  const finalWon = v.final_winner === null || v.final_winner === undefined ? null : v.final_winner === c.you;
  return h('div', { class: 'row-arranger', 'data-testid': 'row-arranger' },
    h('p', { class: 'hint' }, t('rowPlan.hint')),
    h('div', { class: 'hand arr-cards', role: 'region', 'aria-label': t('common.yourHand') }, cards),
    h('table', { class: 'scores row-preview', 'data-testid': 'row-preview' },
      h('caption', null, t('rowPlan.preview')),
      h('thead', null, h('tr', null, ['criterion', 'yours', 'points'].map((k) => h('th', { scope: 'col' }, t(`rowPlan.${k}`))))),
      h('tbody', null,
        finalWon === null ? null : line('final', t(finalWon ? 'rowPlan.won' : 'rowPlan.lost'), pts(finalWon ? 1 : 0)),
        line('sequence', p.sequence, p.sequence >= 3 ? t('rowPlan.atLeast', { n: 1 }) : pts(0)),
        line('run', p.run, p.run >= 3 ? t('rowPlan.atLeast', { n: 1 }) : pts(0)),
        line('triple', p.triple, p.triple >= 1 ? t('rowPlan.atLeast', { n: 2 }) : pts(0)),
        line('pairs', p.pairs, t('rowPlan.against')),
        line('majority', p.majority, t('rowPlan.against')))),
    h('details', { class: 'row-rules' }, h('summary', null, t('rowPlan.how')),
      h('p', { class: 'muted small' }, t('rowPlan.rules', {
        t: (ps.T || []).map(faction).join(' · ') || '—', s: ps.S ? faction(ps.S) : '—' }))),
    h('button', { type: 'button', class: 'primary', 'data-k': 'row-confirm', disabled: sending || c.busy,
      onclick: () => { arrangement.queue = order.slice(placed.length); arrangement.picked = null; c.rerender(); } },
    sending ? t('rowPlan.placing') : t('rowPlan.confirm')));
}

// The confirmed row goes down one card per state message, in order. A card is sent again only when
// it was refused: the opponent's placing may make an action stale on its way (the server then says
// so and changes nothing), which shows here as the same card still unplaced a while later.
const RESEND_MS = 1500;

function sendQueued(c, placed) {
  const a = arrangement;
  a.queue = a.queue.filter((id) => !placed.includes(id));
  clearTimeout(a.retry);
  if (!a.queue.length) return;
  if (c.busy) return;
  const action = c.legal.find((x) => x.type === 'place' && x.card === a.queue[0]);
  if (!action) return;
  const now = Date.now();
  if (a.sent && a.sent.card === action.card && now - a.sent.at < RESEND_MS) {
    a.retry = setTimeout(() => c.rerender(), RESEND_MS);
    return;
  }
  a.sent = { card: action.card, at: now };
  // Refused as stale (the opponent's card went down first), it goes again at once, unannounced.
  const again = () => { if (a.sent && a.sent.card === action.card) a.sent = null; c.rerender(); };
  setTimeout(() => c.act(action, { onStale: again }), 0);
}

// ---- the end: score breakdown --------------------------------------------------------------------------

export function endDetail(c) {
  const v = c.view;
  const detail = v.score_detail;
  const scores = v.scores || [];
  if (!detail) return null;
  const seats = (v.players || []).map((_, i) => i);
  const criteria = Array.isArray(detail.criteria) ? detail.criteria : [];
  const sym = (f) => (f ? faction(f) : '—');
  return h('div', { class: 'breakdown', tabindex: 0, role: 'region', 'aria-label': t('conspiranoicos.breakdown') },
    detail.T ? h('p', { class: 'muted small' }, t('conspiranoicos.pyramidSymbols', {
      t: (detail.T || []).map(sym).join(' · '), s: sym(detail.S) })) : null,
    h('table', { class: 'scores', 'data-testid': 'score-breakdown' },
      h('caption', null, t('conspiranoicos.breakdown')),
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, t('conspiranoicos.criterion')),
        seats.map((s) => h('th', { scope: 'col' }, s === c.you ? t('common.you') : c.name(s))))),
      h('tbody', null, criteria.map((row) => h('tr', null,
        h('th', { scope: 'row' }, has(`conspiranoicos.criteria.${row.criterion}`) ? t(`conspiranoicos.criteria.${row.criterion}`) : row.title),
        seats.map((s) => h('td', { title: measureText(row, s) }, String((row.points || [])[s] ?? 0)))))),
      h('tfoot', null, h('tr', null, h('th', { scope: 'row' }, t('conspiranoicos.total')),
        seats.map((s) => h('td', null, String(scores[s] ?? '')))))),
    detail.decided_by && detail.decided_by !== 'points'
      ? h('p', { class: 'muted small' }, t(`conspiranoicos.decided.${detail.decided_by}`)) : null);
}

function measureText(row, seat) {
  const m = row.measure;
  if (Array.isArray(m)) return String(m[seat] ?? '');
  return '';
}

// ---- the log --------------------------------------------------------------------------------------

const SEAT_FIELDS = new Set(['seat', 'winner', 'loser', 'zone']);

// A log entry in the reader's language from its structured fields (the engine's "text" names seats
// by number, so it is only the fallback for an entry type this client does not know).
export function logLine(c, e) {
  if (typeof e === 'string') return e;
  const params = {};
  for (const [k, val] of Object.entries(e)) {
    if (SEAT_FIELDS.has(k) && typeof val === 'number') params[k] = c.name(val);
    else if (['card', 'challenge', 'pyramid'].includes(k) && typeof val === 'string') params[k] = describeShort(val);
    else if (k === 'back' && typeof val === 'string') params[k] = faction(val);
    else if (k === 'special' && typeof val === 'string') params[k] = t(`conspiranoicos.specials.${val}`);
    else params[k] = val;
  }
  let key = `conspiranoicos.log.${e.type}`;
  if (e.type === 'send' || e.type === 'rest') key += e.to === 'pyramid' ? '_pyramid' : '_zone';
  if (e.type === 'reveal' && Array.isArray(e.plays)) {
    params.a = describeShort(e.plays[0]);
    params.b = describeShort(e.plays[1]);
    params.p0 = c.name(0);
    params.p1 = c.name(1);
  }
  if (e.type === 'random_placement' && Array.isArray(e.zones)) {
    params.z0 = describeShort(e.zones[0]);
    params.z1 = describeShort(e.zones[1]);
    params.p0 = c.name(0);
    params.p1 = c.name(1);
  }
  if (e.type === 'opening_hand' && Array.isArray(e.cards)) params.cards = e.cards.map(describeShort).join(', ');
  if (e.type === 'sort_evidence') params.cards = (e.cards || []).map(describeShort).join(', ') || '—';
  if (e.type === 'result' && Array.isArray(e.scores)) {
    params.a = e.scores[0];
    params.b = e.scores[1];
    params.p0 = c.name(0);
    params.p1 = c.name(1);
    params.names = (e.winners || []).map((w) => c.name(w)).join(' & ');
  }
  if (e.type === 'round_winner') params.how = t(`conspiranoicos.by.${e.by}`);
  if (e.type === 'challenge' && typeof e.card === 'string') params.text = cardChallenge(cardInfo(e.card));
  if (has(key)) {
    const out = t(key, params);
    if (!/\{\w+\}/.test(out)) return out;
  }
  return e.text || e.type;
}

// A card named as players see it (17.7): its value and the symbols on its front ("3 Aliens/Illuminati"),
// or a special card's name and value; never the deck file's id ("AI3"), which appears on no card.
function describeShort(id) {
  const card = cardInfo(id);
  if (card.value === '?') return card.name || `${id}`;
  const special = cardName(card);
  if (special) return t('cardNames.special', { name: special, value: card.value });
  const fronts = (card.front || []).map(faction).join('/');
  return fronts ? t('cardNames.plain', { value: card.value, fronts }) : t('cardNames.bare', { value: card.value });
}

function logPanel(c) {
  const log = c.view.log || [];
  const ol = h('ol', { class: 'log-list', tabindex: 0, 'aria-label': t('common.log') }, log.slice(-60).map((e) => h('li', null, logLine(c, e))));
  requestAnimationFrame(() => { ol.scrollTop = ol.scrollHeight; });
  return h('section', { class: 'log', 'aria-label': t('common.log') }, h('h3', null, t('common.log')), ol);
}

export { factionBadge };

// ---- the recap cards (js/recap.js; GET /api/games/{id}/recap, read once the game is over) ----------

export function recapCards(c, r) {
  const who = (seat) => (seat === c.you ? t('common.you') : c.name(seat));
  const cards = [];
  const row = (p) => h('li', { class: ['recap-hand', r.winners.includes(p.seat) && 'winner'], 'data-seat': p.seat },
    h('span', { class: 'recap-name' }, who(p.seat)),
    h('span', { class: 'recap-cards' }, p.row.map((id) => face(id, { small: true }))));
  cards.push(['reveal', t('recap.rows'), h('ul', { class: 'recap-hands' }, r.reveal.map(row))]);
  const table = (testid, first, rows) => h('div', { class: 'table-scroll', tabindex: 0 },
    h('table', { class: 'scores', 'data-testid': testid },
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, first), [0, 1].map((p) => h('th', { scope: 'col' }, who(p))))),
      h('tbody', null, rows)));
  const line = (label, numbers, attrs = null) => h('tr', attrs, h('th', { scope: 'row' }, label),
    numbers.map((n) => h('td', { class: 'num' }, String(n))));
  const rounds = r.rounds.map((x) => line(String(x.round), x.score,
    { class: r.decisive && r.decisive.round === x.round ? 'decisive' : null, 'data-round': x.round }));
  rounds.push(line(t('conspiranoicos.total'), r.totals, { 'data-round': 'total' }));
  cards.push(['decisive', t('recap.decidingRound'), h('div', null,
    h('p', { class: 'recap-figure', 'data-testid': 'recap-round' }, decisiveText(c, r, who)),
    table('recap-rounds', t('recap.roundCol'), rounds))]);
  const criteria = r.criteria.map((x) => line(t(`conspiranoicos.criteria.${x.criterion}`), x.points, { 'data-criterion': x.criterion }));
  cards.push(['criteria', t('recap.criteria'), table('recap-criteria', t('conspiranoicos.criterion'), criteria)]);
  const f = r.final_challenge;
  cards.push(['final', t('conspiranoicos.finalChallenge'), h('div', null,
    h('span', { class: 'recap-cards' }, face(f.card, { small: true }), ...(f.plays || []).map((id) => face(id, { small: true }))),
    h('p', { class: 'recap-figure', 'data-testid': 'recap-final' }, f.winner >= 0 ? t('recap.finalWon', { name: who(f.winner) }) : t('recap.finalNobody')))]);
  return cards;
}

function decisiveText(c, r, who = c.name) {
  const d = r.decisive;
  if (!d) return t('conspiranoicos.decided.shared');
  const name = who(r.winners[0]);
  if (d.round) return t('recap.fromRound', { n: d.round, name });
  if (d.at === 'sort') return t('recap.inSorting', { name });
  return t(`conspiranoicos.decided.${d.at}`);
}

export function recapLines(c, r) {
  const lines = [`${t('recap.decidingRound')}: ${decisiveText(c, r)}`];
  lines.push(`${t('recap.criteria')}: ${r.criteria.filter((x) => x.points[0] || x.points[1])
    .map((x) => `${t(`conspiranoicos.criteria.${x.criterion}`)} ${x.points[0]}–${x.points[1]}`).join(', ')}`);
  lines.push(`${t('conspiranoicos.total')}: ${c.name(0)} ${r.totals[0]}, ${c.name(1)} ${r.totals[1]}`);
  const f = r.final_challenge;
  lines.push(`${t('conspiranoicos.finalChallenge')}: ${f.winner >= 0 ? t('recap.finalWon', { name: c.name(f.winner) }) : t('recap.finalNobody')}`);
  return lines;
}
