// The Capitol table: purses, influence cards, the Treasury and deck, whose turn, the prompt for the
// decision the server awaits from this seat (built from `legal`), and the public log.
import { cardBack, roleCard } from './cards.js';
import { h } from './dom.js';
import { has, t } from './i18n.js';
import { presenceTag } from './presence.js';

const TURN_ACTIONS = ['income', 'foreign_aid', 'scandal', 'banker', 'mafia', 'hacker', 'reporter',
  'police_investigate', 'police_swap'];
const TARGETED = new Set(['scandal', 'mafia', 'hacker', 'police_investigate']);
const RESPONSES = new Set(['pass', 'challenge', 'block']);

function role(r) { return t(`capitol.roles.${r}`); }
function types(legal) { return new Set(legal.map((a) => a.type)); }

function pendingOf(view) { return view.pending || null; }

function awaited(view, pending) {
  if (pending) {
      if (Array.isArray(pending.awaiting)) return pending.awaiting;
  }
  return Array.isArray(view.awaiting) ? view.awaiting : null;
}

// "Ana claims the Banker to take $3M" — what the pending action is, in words.
function describeAction(c, p) {
  if (!p || !p.action) return '';
  const params = { actor: c.name(p.actor), target: obj(c, p.target), claim: p.claim ? role(p.claim) : '' };
  if (p.target === c.you && p.actor !== c.you && has(`capitol.doesToYou.${p.action}`)) return t(`capitol.doesToYou.${p.action}`, params);
  return t(`capitol.${p.actor === c.you ? 'doesYou' : 'does'}.${p.action}`, params);
}

// A seat as the object of a sentence ("against you").
function obj(c, seat) {
  if (seat === null || seat === undefined) return '';
  return seat === c.you ? t('common.youObject') : c.name(seat);
}

function names(c, seats) {
  return seats.map((s) => (s === c.you ? t('common.youObject') : c.name(s))).join(', ');
}

export function banner(c) {
  const v = c.view;
  const legal = c.legal;
  const p = pendingOf(v);
  const ty = types(legal);
  const phase = (p && p.phase) || v.phase || 'turn';
  if (Array.isArray(v.winners) && v.winners.length && !legal.length) {
    const winners = v.winners.map((s) => c.name(s)).join(' & ');
    return { tone: 'over', text: v.winners.includes(c.you) ? t('end.youWin') : t('capitol.banner.over', { names: winners }) };
  }
  if (legal.length) {
    if (TURN_ACTIONS.some((a) => ty.has(a))) {
      const onlyScandal = [...ty].every((a) => a === 'scandal');
      return { tone: 'decision', text: onlyScandal ? t('capitol.banner.forcedScandal') : t('capitol.banner.yourTurn') };
    }
    if (ty.has('lose')) {
      const why = lossReason(c, p);
      if (why) return { tone: 'threat', text: t('why.lose', { why }) };
      return { tone: 'threat', text: t('capitol.banner.lose', { why: p && p.action ? `(${describeAction(c, p)})` : '' }) };
    }
    if (ty.has('show')) return { tone: 'threat', text: t('capitol.banner.show', { actor: c.name(p && p.actor) }) };
    if (ty.has('return')) return { tone: 'decision', text: t('capitol.banner.return') };
    if (ty.has('keep')) {
      const n = legal.find((a) => a.type === 'keep').cards.length;
      return { tone: 'decision', text: t(n === 1 ? 'words.keepOne' : 'capitol.banner.keep', { n }) };
    }
    if (ty.has('let_keep') || ty.has('force_redraw')) {
      const shown = shownCard(v);
      return { tone: 'decision', text: t('capitol.banner.investigate', { target: c.name(p && p.target), card: shown ? role(shown) : '?' }) };
    }
    if (phase === 'block_challenge') {
      const mine = p.actor === c.you;
      const text = t(mine ? 'capitol.banner.blockedYou' : 'capitol.banner.blockOther', {
        blocker: c.name(p.blocker), actor: c.name(p.actor), card: role(p.block_claim),
      });
      return { tone: mine ? 'threat' : 'decision', text };
    }
    if (ty.has('challenge') || ty.has('block') || ty.has('pass')) {
      const targeted = p && p.target === c.you && c.you !== null;
      const ask = ty.has('block') && ty.has('challenge') ? 'capitol.banner.challengeOrBlock'
        : ty.has('block') ? 'capitol.banner.blockOrPass' : 'capitol.banner.challengeOrPass';
      return { tone: targeted ? 'threat' : 'decision', text: `${describeAction(c, p)}. ${t(ask)}` };
    }
    return { tone: 'decision', text: t('capitol.banner.choose') };
  }
  // Not our decision: say who is awaited and why.
  const waiting = awaited(v, p) || (v.turn !== undefined && v.turn !== null ? [v.turn] : []);
  const awaitedNames = names(c, waiting);
  if (p && p.action) {
    const what = phase === 'block_challenge'
      ? t(p.blocker === c.you ? 'capitol.banner.blockClaimYou' : p.actor === c.you ? 'capitol.banner.blockClaimOfYou' : 'capitol.banner.blockClaim',
        { blocker: c.name(p.blocker), card: role(p.block_claim), actor: obj(c, p.actor) })
      : describeAction(c, p);
    const step = t(`capitol.phase.${phase}`, { names: awaitedNames });
    // Ruling 6a: the target's own answer of its one prompt, sealed from the others until the action stands.
    const sealed = p.block_answer && p.target === c.you
      ? ` ${p.block_answer === 'pass' ? t('capitol.banner.sealedPass')
        : t('capitol.banner.sealedBlock', { card: role(p.block_answer) })}`
      : '';
    return { tone: 'wait', text: `${what}. ${step}${sealed}` };
  }
  return { tone: 'wait', text: t('capitol.banner.turnOf', { name: c.name(v.turn) }) };
}

// Why this seat must lose an influence now (17.6), from the pending decision (views.py _pending):
// a challenge it lost (the card was there), a bluff of its own caught, a Scandal or a hack. The
// queue of losses says who loses; `reveal`, `then` and the challengers say why.
function lossReason(c, p) {
  if (!p || c.you === null || c.you === undefined) return '';
  const me = c.you;
  const has = (x) => x !== null && x !== undefined;
  if (p.reveal && has(p.reveal.seat) && p.reveal.seat !== me) {
    return t('why.challengeFailed', { name: c.name(p.reveal.seat), card: role(p.reveal.card) });
  }
  if (p.blocker === me && has(p.block_challenger) && p.then === 'resolve') {
    return t('why.caughtBlock', { name: c.name(p.block_challenger), card: role(p.block_claim) });
  }
  if (p.actor === me && has(p.challenger) && p.claim) {
    return t('why.caught', { name: c.name(p.challenger), card: role(p.claim) });
  }
  if (p.target === me && p.action === 'scandal') return t('why.scandal', { name: c.name(p.actor) });
  if (p.target === me && p.action === 'hacker') return t('why.hacked', { name: c.name(p.actor) });
  return '';
}

function shownCard(v) {
  const p = v.pending || {};
  return p.shown || null;
}

// ---- the table --------------------------------------------------------------------------------------

export function renderTable(c) {
  const v = c.view;
  const players = v.players || [];
  const order = [];
  const start = c.you !== null && c.you !== undefined ? c.you : 0;
  for (let i = 1; i <= players.length; i += 1) order.push((start + i) % players.length);
  const others = c.you !== null && c.you !== undefined ? order.filter((s) => s !== c.you) : order;
  const p = pendingOf(v);
  const waiting = new Set(awaited(v, p) || []);

  // A big table (more than five others, up to nine): compact panels, so one's own hand stays near.
  const seats = h('section', { class: ['opponents', others.length > 5 && 'many'], 'aria-label': t('capitol.players') },
    others.map((s) => playerPanel(c, players[s], s, waiting)));

  const center = h('section', { class: 'center-area', 'aria-label': t('capitol.centre') },
    h('div', { class: 'pile treasury' },
      h('span', { class: 'pile-label' }, t('capitol.treasury')),
      h('span', { class: 'money-big' }, money(v.treasury))),
    h('div', { class: 'pile deck' },
      cardBack(t('capitol.deck'), { small: true }),
      h('span', { class: 'pile-label' }, t('capitol.deckCount', { n: v.deck }))),
    p && p.action ? pendingChip(c, p) : null);

  const me = c.you !== null && c.you !== undefined ? players[c.you] : null;
  // The dock (style.css): the decision's sheet and one's own hand, together at the bottom of the
  // window whatever the size of the table or the scroll, so that neither hides the other (issue 26).
  return h('div', { class: 'capitol-table' },
    seats,
    center,
    logPanel(c),
    me || c.legal.length ? h('div', { class: ['dock', c.legal.length && 'deciding'] }, controls(c), me ? myArea(c, me, waiting) : null) : null);
}

function money(n) { return t('capitol.money', { n: n === undefined ? '?' : n }); }

function gameOver(v) { return Array.isArray(v.winners) && v.winners.length > 0; }

function playerPanel(c, pl, seat, waiting) {
  const v = c.view;
  // Once the game is over nobody has a turn (the winner kept the last one's "turn" tag: 17.11).
  const isTurn = v.turn === seat && !gameOver(v);
  const alive = pl.alive !== false;
  const hiddenCount = Array.isArray(pl.hidden) ? pl.hidden.length : (pl.hidden || 0);
  const revealed = pl.revealed || [];
  const p = pendingOf(v);
  const targeted = p && p.target === seat;
  return h('article', {
    class: ['player', isTurn && 'turn', !alive && 'dead', waiting.has(seat) && 'awaited', targeted && 'targeted'],
    'aria-label': `${c.name(seat)}: ${money(pl.money)}, ${t('capitol.cardsLeft', { n: hiddenCount })}${isTurn ? ', ' + t('capitol.theirTurn') : ''}${!alive ? ', ' + t('capitol.eliminated') : ''}`,
    'data-seat': seat,
  },
  h('header', null,
    h('span', { class: 'pname', title: c.name(seat) }, c.name(seat)),
    isTurn && alive ? h('span', { class: 'tag turn-tag' }, t('capitol.turnTag')) : null,
    waiting.has(seat) && !isTurn ? h('span', { class: 'tag think' }, '…') : null,
    !alive ? h('span', { class: 'tag out' }, t('capitol.eliminated')) : null,
    presenceTag(c.room, seat)),
  h('div', { class: 'purse' }, money(pl.money)),
  h('div', { class: 'hand small-hand' },
    Array.from({ length: hiddenCount }, () => cardBack(t('capitol.faceDown'), { small: true })),
    revealed.map((r) => h('span', { class: 'lost', title: t('capitol.lostCard') }, roleCard(r, role(r), { small: true, aria: `${role(r)} (${t('capitol.lostCard')})` })))),
  known(c, seat),
  null);
}

// What this seat learnt as the Police player about another's hand (view.known).
function known(c, seat) {
  const cards = (c.view.known || []).filter((k) => k.seat === seat).map((k) => role(k.card));
  return cards.length ? h('div', { class: 'known' }, t('capitol.known', { cards: cards.join(', ') })) : null;
}

function pendingChip(c, p) {
  return h('div', { class: 'pending-chip' },
    p.claim ? roleCard(p.claim, role(p.claim), { small: true }) : null,
    h('span', null, describeAction(c, p)));
}

function myArea(c, me, waiting) {
  const v = c.view;
  const hidden = Array.isArray(me.hidden) ? me.hidden : [];
  const revealed = me.revealed || [];
  const onCards = ['lose', 'return', 'show', 'keep'].some((k) => types(c.legal).has(k));
  return h('section', { class: ['me-area', v.turn === c.you && !gameOver(v) && 'turn', waiting.has(c.you) && 'awaited', onCards && 'on-cards'],
    role: 'region', 'aria-label': t('common.yourHand') },
    h('header', null,
      h('span', { class: 'pname', title: `${c.name(c.you)} (${t('common.you')})` }, `${c.name(c.you)} (${t('common.you')})`),
      h('span', { class: 'purse big' }, money(me.money))),
    h('div', { class: 'hand my-hand' },
      hidden.map((r, i) => cardButton(c, r, i)),
      revealed.map((r) => h('span', { class: 'lost', title: t('capitol.lostCard') }, roleCard(r, role(r), { aria: `${role(r)} (${t('capitol.lostCard')})` })))),
    shownCard(v) && types(c.legal).has('let_keep') ? h('p', { class: 'shown' }, t('capitol.shownYou', { card: role(shownCard(v)) })) : null);
}

// A card of your own hand; clickable when the decision is about one of your cards.
function cardButton(c, r, index) {
  const ty = types(c.legal);
  const ui = c.ui;
  const single = ['lose', 'return', 'show'].find((k) => ty.has(k));
  if (single) {
    const ok = c.legal.some((a) => a.type === single && a.card === r);
    return h('button', {
      type: 'button', class: ['card-btn', single], disabled: !ok || c.busy, 'data-k': `card-${index}`,
      'aria-label': t(`capitol.cardAction.${single}`, { card: role(r) }),
      onclick: () => c.act({ type: single, card: r }),
    }, roleCard(r, role(r)), h('span', { class: 'card-cap' }, t(`capitol.cardVerb.${single}`)));
  }
  if (ty.has('keep')) {
    ui.keep = ui.keep || new Set();
    const on = ui.keep.has(index);
    return h('button', {
      type: 'button', class: ['card-btn', 'keep', on && 'on'], 'aria-pressed': String(on), 'data-k': `card-${index}`,
      'aria-label': t('capitol.cardAction.keep', { card: role(r) }),
      onclick: () => { if (on) ui.keep.delete(index); else ui.keep.add(index); c.rerender(); },
    }, roleCard(r, role(r)), h('span', { class: 'card-cap' }, on ? t('capitol.kept') : t('capitol.cardVerb.keep')));
  }
  return h('span', { class: 'card-static' }, roleCard(r, role(r)));
}

// ---- the decision ------------------------------------------------------------------------------------

function controls(c) {
  const legal = c.legal;
  if (!legal.length) return null;
  const ty = types(legal);
  const box = h('section', { class: 'controls', role: 'region', 'aria-label': t('common.yourMove') });
  if (TURN_ACTIONS.some((a) => ty.has(a))) box.appendChild(turnControls(c));
  else if ([...ty].some((x) => RESPONSES.has(x))) box.appendChild(responseControls(c));
  else if (ty.has('keep')) box.appendChild(keepControls(c));
  else if (ty.has('let_keep') || ty.has('force_redraw')) {
    box.appendChild(h('div', { class: 'row' },
      legal.map((a) => h('button', { type: 'button', class: a.type === 'force_redraw' ? 'danger' : 'primary', disabled: c.busy,
        'data-k': `act-${a.type}`, onclick: () => c.act(a) }, t(`capitol.actions.${a.type}`)))));
  } else if (['lose', 'return', 'show'].some((k) => ty.has(k))) {
    box.appendChild(h('p', { class: 'hint' }, t('capitol.pickCard')));
  }
  // Anything the client does not know how to draw still gets a button, so no game can stall here.
  const known = new Set([...TURN_ACTIONS, ...RESPONSES, 'keep', 'let_keep', 'force_redraw', 'lose', 'return', 'show']);
  const unknown = legal.filter((a) => !known.has(a.type));
  if (unknown.length) {
    box.appendChild(h('div', { class: 'row' }, unknown.map((a, i) => h('button', { type: 'button', class: 'secondary',
      'data-k': `unk-${i}`, onclick: () => c.act(a) }, a.type))));
  }
  return box;
}

const ACTION_ROLE = { banker: 'banker', mafia: 'mafia', hacker: 'hacker', reporter: 'reporter',
  police_investigate: 'police', police_swap: 'police' };

function turnControls(c) {
  const legal = c.legal;
  const ui = c.ui;
  if (ui.pick && TARGETED.has(ui.pick)) {
    const options = legal.filter((a) => a.type === ui.pick);
    return h('div', { class: 'targets' },
      h('p', { class: 'hint' }, t('capitol.chooseTarget', { action: t(`capitol.actions.${ui.pick}`) })),
      h('div', { class: 'row wrap' },
        options.map((a) => {
          const pl = c.view.players[a.target];
          return h('button', { type: 'button', class: 'target', disabled: c.busy, 'data-k': `target-${a.target}`,
            onclick: () => c.act(a) }, h('strong', null, c.name(a.target)), h('span', null, money(pl && pl.money)));
        }),
        h('button', { type: 'button', class: 'ghost', 'data-k': 'cancel', onclick: () => { ui.pick = null; c.rerender(); } }, t('common.cancel'))));
  }
  const general = ['income', 'foreign_aid', 'scandal'];
  const character = ['banker', 'mafia', 'hacker', 'reporter', 'police_investigate', 'police_swap'];
  const button = (type) => {
    const options = legal.filter((a) => a.type === type);
    const r = ACTION_ROLE[type];
    return h('button', {
      type: 'button', class: ['action', r ? `role-${r}` : 'general'], disabled: !options.length || c.busy,
      'data-k': `act-${type}`, 'data-action': type,
      onclick: () => {
        if (TARGETED.has(type)) {
          if (options.length === 1) c.act(options[0]);
          else { ui.pick = type; c.rerender(); }
        } else c.act(options[0]);
      },
    },
    h('span', { class: 'action-name' }, t(`capitol.actions.${type}`)),
    h('span', { class: 'action-hint' }, t(`capitol.hints.${type}`)));
  };
  return h('div', { class: 'turn-actions' },
    h('div', { class: 'action-group' }, h('h3', null, t('capitol.general')), general.map(button)),
    h('div', { class: 'action-group' }, h('h3', null, t('capitol.character')), character.map(button)));
}

function responseControls(c) {
  const legal = c.legal;
  const p = pendingOf(c.view) || {};
  const facingBlock = p.phase === 'block_challenge' && p.actor === c.you;
  const buttons = [];
  for (const a of legal) {
    if (a.type === 'challenge') {
      buttons.push(h('button', { type: 'button', class: 'danger', disabled: c.busy, 'data-k': 'act-challenge', onclick: () => c.act(a) },
        t('capitol.actions.challenge')));
    } else if (a.type === 'block') {
      buttons.push(h('button', { type: 'button', class: `warn role-${a.card}`, disabled: c.busy, 'data-k': `act-block-${a.card}`,
        onclick: () => c.act(a) }, t('capitol.actions.blockAs', { card: role(a.card) })));
    }
  }
  const pass = legal.find((a) => a.type === 'pass');
  if (pass) {
    buttons.push(h('button', { type: 'button', class: 'secondary', disabled: c.busy, 'data-k': 'act-pass', onclick: () => c.act(pass) },
      t(facingBlock ? 'capitol.actions.acceptBlock' : 'capitol.actions.pass')));
  }
  // Ruling 6a: the target's one prompt (challenge, block or let it pass): its block stays secret
  // until everyone has answered, and is not asked again.
  const onePrompt = p.phase === 'challenge' && legal.some((a) => a.type === 'block');
  const row = h('div', { class: 'row wrap responses' }, buttons);
  if (!onePrompt) return row;
  return h('div', { class: 'one-prompt' }, row, h('p', { class: 'hint', 'data-k': 'sealed-hint' }, t('capitol.sealedHint')));
}

function keepControls(c) {
  const legal = c.legal.filter((a) => a.type === 'keep');
  const me = c.view.players[c.you];
  const hidden = me.hidden || [];
  const chosen = [...(c.ui.keep || new Set())].map((i) => hidden[i]).sort();
  const n = legal[0].cards.length;
  const match = legal.find((a) => [...a.cards].sort().join() === chosen.join());
  return h('div', { class: 'keep-controls' },
    h('p', { class: 'hint' }, t(n === 1 ? 'words.keepHintOne' : 'capitol.keepHint', { n, chosen: chosen.length })),
    h('button', { type: 'button', class: 'primary', disabled: !match || c.busy, 'data-k': 'act-keep',
      onclick: () => c.act(match) }, t('capitol.actions.keep', { cards: chosen.map(role).join(', ') || '—' })));
}

// ---- the log ---------------------------------------------------------------------------------------

const SEAT_FIELDS = new Set(['seat', 'target', 'challenged', 'actor', 'blocker', 'police']);
const ROLE_FIELDS = new Set(['card', 'claim']);

// A log entry in the reader's language, from its structured fields (views.py render_entry); the
// engine's English "text" is the fallback for an entry type this client does not know.
export function logLine(c, e) {
  if (typeof e === 'string') return e;
  const params = {};
  for (const [k, val] of Object.entries(e)) {
    if (SEAT_FIELDS.has(k) && typeof val === 'number') params[k] = c.name(val);
    else if (ROLE_FIELDS.has(k) && typeof val === 'string') params[k] = role(val);
    else params[k] = val;
  }
  if (e.type === 'action' && has(`capitol.logAction.${e.action}`)) return t(`capitol.logAction.${e.action}`, params);
  if (e.type === 'draw' || e.type === 'exchange') params.cards = t(e.count === 1 ? 'capitol.oneCard' : 'capitol.nCards', { n: e.count });
  // The stalemate rule's end (docs/rules/capitol.md): its text says why, and names every winner.
  if (e.type === 'stalemate' && Array.isArray(e.winners)) params.winners = e.winners.map((w) => c.name(w)).join(', ');
  const key = e.type === 'stalemate' ? `capitol.log.stalemate_${e.reason}` : `capitol.log.${e.type}`;
  if (has(key)) {
    const out = t(key, params);
    if (!/\{\w+\}/.test(out)) return out;
  }
  return e.text || e.type;
}

function logPanel(c) {
  const log = c.view.log || [];
  const items = log.slice(-60).map((e) => h('li', { class: `log-${e.type || 'text'}` }, logLine(c, e)));
  const ol = h('ol', { class: 'log-list', 'aria-live': 'off', tabindex: 0, 'aria-label': t('common.log') }, items);
  // Keep the newest entries in sight.
  requestAnimationFrame(() => { ol.scrollTop = ol.scrollHeight; });
  return h('section', { class: 'log', 'aria-label': t('common.log') }, h('h3', null, t('common.log')), ol);
}

// ---- the end: every claim of the game, the bluffs marked (view.summary, only once the game is over) ----

export function endDetail(c) {
  const s = c.view.summary;
  if (!s || !Array.isArray(s.claims)) return null;
  const seats = (c.view.players || []).map((_, i) => i);
  const count = (list, seat) => String((Array.isArray(list) && list[seat]) || 0);
  // Each player's row (name, bluffs, caught), then their claims on a row of their own across the
  // table: three columns fit a 320 px phone and the side panel in every language, where a column of
  // claims beside the counts pushed "Caught" past the panel's edge. Still focusable and scrollable
  // sideways, should a browser's font ever need it.
  return h('div', { class: 'claims-summary', tabindex: 0, role: 'region', 'aria-label': t('capitol.summary.title') },
    h('table', { class: 'scores claims', 'data-testid': 'claims-summary' },
      h('caption', null, t('capitol.summary.title')),
      h('thead', null, h('tr', null,
        ['player', 'bluffs', 'caught'].map((k) => h('th', { scope: 'col' }, t(`capitol.summary.${k}`))))),
      seats.map((seat) => {
        const mine = s.claims.filter((k) => k.seat === seat);
        return h('tbody', { 'data-seat': seat },
          h('tr', { 'data-seat': seat },
            h('th', { scope: 'row' }, seat === c.you ? `${c.name(seat)} (${t('common.you')})` : c.name(seat)),
            h('td', { class: 'num' }, count(s.bluffs, seat)),
            h('td', { class: 'num' }, count(s.caught, seat))),
          h('tr', { class: 'claims-row' }, h('td', { colspan: 3 },
            h('span', { class: 'sr-only' }, `${t('capitol.summary.claims')}: `),
            mine.length
              ? h('ul', { class: 'claim-list' }, mine.map((k) => claimChip(c, k)))
              : h('span', { class: 'muted' }, t('capitol.summary.none')))));
      })),
    h('p', { class: 'muted small' }, t('capitol.summary.legend')));
}

// One claim: ✓ or ✗, the role, "block" for a block, ⚑ if challenged; the whole story in its label.
function claimChip(c, k) {
  const parts = [t(k.honest ? 'capitol.summary.honest' : 'capitol.summary.bluff', { role: role(k.role) })];
  if (k.block) parts.push(t('capitol.summary.ofBlock', { actor: c.name(k.actor), action: t(`capitol.actions.${k.block}`) }));
  else if (k.target !== null && k.target !== undefined) parts.push(t('capitol.summary.against', { target: obj(c, k.target) }));
  if (k.challenged) parts.push(t(k.caught ? 'capitol.summary.caughtBy' : 'capitol.summary.challengedBy', { name: obj(c, k.challenger) }));
  const label = parts.join(', ');
  return h('li', {
    class: ['claim', k.honest ? 'honest' : 'bluff', k.challenged && 'challenged', k.caught && 'caught'],
    title: label, 'aria-label': label,
  },
  h('span', { class: 'mark', 'aria-hidden': 'true' }, k.honest ? '✓' : '✗'),
  h('span', { class: 'claim-role' }, role(k.role)),
  k.block ? h('span', { class: 'claim-kind' }, t('capitol.summary.block')) : null,
  k.challenged ? h('span', { class: 'flag', 'aria-hidden': 'true' }, '⚑') : null);
}

// ---- the recap cards (js/recap.js; GET /api/games/{id}/recap, read once the game is over) ----------

const signed = (n) => (n > 0 ? `+${money(n)}` : `−${money(-n)}`);

// The winners' chance of winning after each step, as a small line (0–100 %).
function chanceLine(chances, at) {
  if (!Array.isArray(chances) || chances.length < 2) return null;
  const w = 240; const hgt = 48; const last = chances.length - 1;
  const pts = chances.map((p, i) => `${((i / last) * w).toFixed(1)},${(hgt - (p / 100) * hgt).toFixed(1)}`).join(' ');
  const x = ((at / last) * w).toFixed(1);
  const el = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  el.setAttribute('viewBox', `0 0 ${w} ${hgt}`);
  el.setAttribute('class', 'chance-line');
  el.setAttribute('aria-hidden', 'true');
  el.innerHTML = `<line x1="0" y1="${hgt / 2}" x2="${w}" y2="${hgt / 2}" class="half"/><polyline points="${pts}"/><line x1="${x}" y1="0" x2="${x}" y2="${hgt}" class="at"/>`;
  return el;
}

export function recapCards(c, r) {
  const who = (seat) => (seat === c.you ? t('common.you') : c.name(seat));
  const cards = [];
  const lost = (x) => h('span', { class: 'lost', title: t('capitol.lostCard') },
    roleCard(x, role(x), { small: true, aria: `${role(x)} (${t('capitol.lostCard')})` }));
  const hand = (p) => h('li', { class: ['recap-hand', r.winners.includes(p.seat) && 'winner'], 'data-seat': p.seat },
    h('span', { class: 'recap-name' }, who(p.seat)),
    h('span', { class: 'recap-cards' }, p.hidden.map((x) => roleCard(x, role(x), { small: true })), p.revealed.map(lost)));
  cards.push(['reveal', t('recap.hands'), h('ul', { class: 'recap-hands' }, r.reveal.map(hand))]);
  const d = r.decisive;
  if (d) {
    cards.push(['decisive', t('recap.decisive'), h('div', null,
      h('p', { class: 'recap-figure', 'data-testid': 'recap-chance' }, t('recap.chance', { names: r.winners.map(who).join(' & '), before: d.before, after: d.after })),
      chanceLine(r.chances, d.step),
      h('ul', { class: 'recap-log' }, (d.entries || []).map((e) => h('li', null, logLine(c, e)))),
      h('p', { class: 'muted small' }, t('recap.step', { n: d.step, of: r.steps })))]);
  }
  const s = r.swing;
  if (s) {
    cards.push(['swing', t('recap.swing'), h('div', null,
      h('p', { class: 'recap-figure', 'data-testid': 'recap-swing' }, `${who(s.seat)} ${signed(s.amount)}`),
      h('ul', { class: 'recap-log' }, (s.entries || []).map((e) => h('li', null, logLine(c, e)))))]);
  }
  // Per player two cells, bluffs "told (caught)" and challenges "won – lost", under two header rows:
  // a table that fits a phone's width in every language, at any number of seats.
  const head = [
    h('tr', null, h('th', { scope: 'col', rowspan: 2 }, t('capitol.summary.player')),
      ['bluffs', 'challenges'].map((k) => h('th', { scope: 'col' }, t(`recap.colGroup.${k}`)))),
    h('tr', { class: 'sub' }, ['bluffs', 'challenges'].map((k) => h('th', { scope: 'col' }, t(`recap.colPair.${k}`))))];
  const n = (p, k) => h('span', { 'data-k': k }, String(p[k]));
  const line = (p, seat) => h('tr', { 'data-seat': seat }, h('th', { scope: 'row' }, who(seat)),
    h('td', { class: 'num' }, n(p, 'bluffs'), ' (', n(p, 'bluffs_caught'), ')'),
    h('td', { class: 'num' }, n(p, 'challenges_won'), ' – ', n(p, 'challenges_lost')));
  const table = h('table', { class: 'scores', 'data-testid': 'recap-bluffs' },
    h('thead', null, head), h('tbody', null, r.per_seat.map(line)));
  cards.push(['bluffs', t('recap.bluffs'), h('div', { class: 'table-scroll', tabindex: 0 }, table)]);
  return cards;
}

// The same story in a few lines, for sharing as text or drawing on the picture.
export function recapLines(c, r) {
  const lines = [];
  if (r.decisive) lines.push(`${t('recap.decisive')}: ${t('recap.chance', { names: r.winners.map(c.name).join(' & '), before: r.decisive.before, after: r.decisive.after })}`
    + ((r.decisive.entries || []).length ? ` (${logLine(c, r.decisive.entries[0])})` : ''));
  if (r.swing) lines.push(`${t('recap.swing')}: ${c.name(r.swing.seat)} ${signed(r.swing.amount)}`);
  lines.push(`${t('recap.bluffs')}:`);
  r.per_seat.forEach((p, seat) => lines.push(`  ${c.name(seat)}: ${t('recap.bluffLine', { bluffs: p.bluffs, caught: p.bluffs_caught, won: p.challenges_won, lost: p.challenges_lost })}`));
  return lines;
}
