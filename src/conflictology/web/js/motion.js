// Motion that tells the story (issue 26; docs/web.md "Motion"): players on a video call look up at the
// table and see what just happened. The client draws the whole table again at every state message, so
// this module keeps the view it saw last (per room, game and seat) and, after each drawing, compares
// it with the new one: coins fly between the Treasury and the purses, a claim sits as a plaque on the
// claimant's seat, a revealed card flips, a lost influence turns face up, cards go to and from the deck
// with their count, a Conspiranoicos play turns over; and the latest event is told in words under the
// banner. Everything is read from the two views alone, which hold only what this seat may see.
// Each movement lasts at most MS; nothing waits for one to end (the table is drawn first, overlays do
// not take clicks and go when done); none under `prefers-reduced-motion` or with the switch off.
import { cardBack, roleCard } from './cards.js';
import { h } from './dom.js';
import { t } from './i18n.js';
import { logLine as capitolLine } from './capitol.js';
import { logLine as conspiranoicosLine } from './conspiranoicos.js';

const OFF_KEY = 'conflictology:motion';
export const MS = 400;
// A revealed card stays face up this long once turned (still, after its MS of turning), then fades.
const REVEAL_HOLD = 900;
// More new log entries than this in one state is a jump (a reconnect, a tab that caught up): it is
// not replayed, only drawn.
const MAX_STEP = 8;
const LINES = { capitol: capitolLine, conspiranoicos: conspiranoicosLine };

function savedOff() { try { return localStorage.getItem(OFF_KEY) === '0'; } catch { return false; } }
function keep(on) { try { localStorage.setItem(OFF_KEY, on ? '1' : '0'); } catch { /* private mode */ } }

let off = savedOff();
let last = null; // {key, view}: the view drawn last, and whose it was

function reduced() { return !!(globalThis.matchMedia && matchMedia('(prefers-reduced-motion: reduce)').matches); }

// Whether the table moves: the player's switch, and the system's wish for less motion, which wins.
export function enabled() { return !off && !reduced(); }

// ---- after each drawing ---------------------------------------------------------------------------

// Called by app.js after every render: `c` is the table's context (screens/table.js) or null away
// from the table; `code` the room's. Draws the latest-event strip, then what moved since the last view.
export function after(c, code) {
  const view = c && c.view;
  if (!view || !Array.isArray(view.players) || !view.players.length) {
    last = null;
    clearLayer();
    return;
  }
  const key = [code, c.room && c.room.game_id, view.game, c.you].join('|');
  const before = last && last.key === key ? last.view : null;
  last = { key, view };
  const root = document.querySelector('#main .table-wrap');
  if (!root) return;
  const fresh = step(before, view);
  // Not one small step on (a reconnect, a state far ahead, a rematch, a first view): what still flies
  // belongs to a table no longer drawn, and would land on seats whose story it no longer tells.
  if (fresh === null) clearLayer();
  const moving = enabled() && !document.hidden;
  strip(root, c, moving && fresh !== null && fresh.length > 0);
  // A plaque pops up only when it is new since the last view one small step back.
  plaques(root, c, moving && fresh !== null ? before : view, enabled());
  if (!moving) {
    if (!enabled()) clearLayer();
    return;
  }
  if (!fresh || !fresh.length) return;
  if (view.game === 'capitol') tellCapitol(root, c, before, view, fresh);
  else if (view.game === 'conspiranoicos') tellConspiranoicos(root, before, view);
}

// The log entries new since `before`, or null when the two views are not one small step apart: no
// earlier view (a fresh page, a reconnect), another game, a log that does not go on from the last one
// seen (a rematch), or a jump of many entries.
function step(before, view) {
  if (!before) return null;
  const a = Array.isArray(before.log) ? before.log : [];
  const b = Array.isArray(view.log) ? view.log : [];
  if (b.length < a.length || (before.players || []).length !== view.players.length) return null;
  if (a.length && JSON.stringify(a[a.length - 1]) !== JSON.stringify(b[a.length - 1])) return null;
  const fresh = b.slice(a.length);
  return fresh.length <= MAX_STEP ? fresh : null;
}

// ---- the latest event, in words, under the banner -----------------------------------------------------
// Not a live region: the banner's words already go to the polite live region (#live), and the log's
// newest entry announced as well would say every step twice.

function strip(root, c, changed) {
  const log = c.view.log || [];
  const line = LINES[c.view.game];
  const banner = root.querySelector('[data-testid=banner]');
  if (!banner || !line || !log.length) return;
  const el = h('p', { class: 'motion-strip', 'data-testid': 'latest', 'aria-live': 'off' },
    h('span', { class: 'motion-strip-label' }, t('motion.latest')),
    h('span', { class: 'motion-strip-text' }, line(c, log[log.length - 1])));
  banner.after(el);
  if (changed) {
    el.querySelector('.motion-strip-text').animate(
      [{ opacity: 0, transform: 'translateY(-6px)' }, { opacity: 1, transform: 'none' }],
      { duration: 250, easing: 'ease-out' });
  }
}

// ---- where things are on the page -----------------------------------------------------------------------
// By the hooks the games' tables keep: Capitol's seat panels (.opponents .player[data-seat]) and one's
// own area (.me-area, wherever it sits), the Treasury and the deck; Conspiranoicos' plays and Pyramid.

function seatEl(root, c, seat) {
  if (c.you !== null && c.you !== undefined && seat === c.you) return root.querySelector('.me-area');
  return root.querySelector(`.opponents .player[data-seat="${seat}"]`);
}

function part(root, c, seat, selector) {
  const el = seatEl(root, c, seat);
  return el ? el.querySelector(selector) || el : null;
}

function placeOf(root, where) {
  if (where === 'treasury') return root.querySelector('.treasury .money-big') || root.querySelector('.treasury');
  if (where === 'deck') return root.querySelector('.pile.deck');
  return null;
}

function centre(el) {
  const r = el.getBoundingClientRect();
  return { x: r.left + r.width / 2, y: r.top + r.height / 2, r };
}

function visible(el) {
  const r = el.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
}

// ---- the overlay layer: beside #app, so a redraw of the table does not cut a flight short ---------------

function layer() {
  let el = document.getElementById('motion-layer');
  if (!el) {
    el = h('div', { id: 'motion-layer', class: 'motion-layer', 'aria-hidden': 'true' });
    document.body.appendChild(el);
  }
  return el;
}

// Everything still in flight, stopped and gone (its animations cancelled, not left to run unseen).
function clearLayer() {
  const el = document.getElementById('motion-layer');
  if (!el) return;
  for (const a of el.getAnimations({ subtree: true })) a.cancel();
  el.replaceChildren();
}

function drop(el, anim) {
  const gone = () => el.remove();
  anim.addEventListener('finish', gone);
  anim.addEventListener('cancel', gone);
}

// One thing flying from one element's centre to another's, in a slight arc; gone when it lands.
function fly(el, from, to, { delay = 0, duration = MS } = {}) {
  const a = centre(from);
  const b = centre(to);
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const lift = -Math.min(40, 12 + Math.hypot(dx, dy) / 8);
  el.style.left = `${a.x}px`;
  el.style.top = `${a.y}px`;
  el.dataset.x0 = String(Math.round(a.x));
  el.dataset.y0 = String(Math.round(a.y));
  el.dataset.x1 = String(Math.round(b.x));
  el.dataset.y1 = String(Math.round(b.y));
  layer().appendChild(el);
  const at = (k, up, scale) => `translate(-50%, -50%) translate(${dx * k}px, ${dy * k + up}px) scale(${scale})`;
  const anim = el.animate([
    { transform: at(0, 0, 0.7), opacity: 0 },
    { transform: at(0.15, lift * 0.5, 1), opacity: 1, offset: 0.15 },
    { transform: at(0.5, lift, 1.05), opacity: 1, offset: 0.5 },
    { transform: at(0.9, lift * 0.2, 1), opacity: 1, offset: 0.9 },
    { transform: at(1, 0, 0.85), opacity: 0 },
  ], { duration, delay, easing: 'ease-in-out', fill: 'backwards' });
  drop(el, anim);
  return anim;
}

// A card turning over: from its edge to its face.
function flip(el, delay = 0) {
  if (!el) return null;
  const art = el.matches('.card-art') ? el : el.querySelector('.card-art') || el;
  return art.animate([
    { transform: 'perspective(400px) rotateY(90deg)', filter: 'brightness(1.6)' },
    { transform: 'perspective(400px) rotateY(0deg)', filter: 'none' },
  ], { duration: MS, delay, easing: 'ease-out', fill: 'backwards' });
}

// ---- Capitol ---------------------------------------------------------------------------------------------

function tellCapitol(root, c, before, view, fresh) {
  // Everything is measured before anything is added, so the page lays out once.
  const jobs = [];
  for (const flow of coinFlows(before, view, fresh)) {
    const from = flow.from === 'treasury' ? placeOf(root, 'treasury') : part(root, c, flow.from, '.purse');
    const to = flow.to === 'treasury' ? placeOf(root, 'treasury') : part(root, c, flow.to, '.purse');
    if (from && to && visible(from) && visible(to)) jobs.push(() => coin(flow, from, to));
  }
  const lost = new Map();
  fresh.forEach((e, i) => {
    if (e.type === 'lose' && typeof e.seat === 'number') lost.set(e.seat, (lost.get(e.seat) || 0) + 1);
    if (e.type === 'reveal' && typeof e.seat === 'number' && typeof e.card === 'string') {
      jobs.push(() => revealed(root, c, view, e.seat, e.card));
    }
    if (['draw', 'exchange', 'return', 'replace', 'force_redraw'].includes(e.type)) {
      jobs.push(() => cardTrip(root, c, e, i));
    }
  });
  for (const [seat, n] of lost) {
    const hand = part(root, c, seat, '.hand');
    const faceUp = hand ? [...hand.querySelectorAll('.lost')] : [];
    // The newest losses are the last face-up cards of the seat (views list them in the order lost).
    faceUp.slice(-n).forEach((el) => jobs.push(() => flip(el)));
  }
  for (const job of jobs) job();
}

// Who paid whom, from the purses and the Treasury of the two views: a theft (a `steal` entry, or one
// seat's loss matching another's gain while the Treasury stays) goes seat to seat, the rest to or from
// the Treasury (income, aid, the Banker, a Scandal's or a hack's cost, an eliminated seat's money).
function coinFlows(before, view, fresh) {
  const was = before.players || [];
  const delta = view.players.map((p, i) => Number(p.money || 0) - Number((was[i] && was[i].money) || 0));
  const flows = [];
  const move = (from, to, amount) => {
    flows.push({ from, to, amount });
    if (from !== 'treasury') delta[from] += amount;
    if (to !== 'treasury') delta[to] -= amount;
  };
  for (const e of fresh) {
    if (e.type !== 'steal' || typeof e.seat !== 'number' || typeof e.target !== 'number') continue;
    const amount = Math.min(Number(e.amount) || 0, delta[e.seat] || 0, -(delta[e.target] || 0));
    if (amount > 0) move(e.target, e.seat, amount);
  }
  const treasury = Number(view.treasury || 0) - Number(before.treasury || 0);
  const gains = delta.map((d, s) => [d, s]).filter(([d]) => d > 0);
  const losses = delta.map((d, s) => [d, s]).filter(([d]) => d < 0);
  if (treasury === 0 && gains.length === 1 && losses.length === 1 && gains[0][0] === -losses[0][0]) {
    move(losses[0][1], gains[0][1], gains[0][0]);
  }
  delta.forEach((d, seat) => {
    if (d > 0) move('treasury', seat, d);
    else if (d < 0) move(seat, 'treasury', -d);
  });
  return flows;
}

function coin(flow, from, to) {
  const el = h('span', { class: 'motion-coin', 'data-from': String(flow.from), 'data-to': String(flow.to),
    'data-amount': String(flow.amount) }, t('capitol.money', { n: flow.amount }));
  fly(el, from, to);
}

// Cards to and from the deck, by their count only (an exchange's roles are its player's alone).
function cardTrip(root, c, e, index) {
  const hand = part(root, c, e.seat, '.hand');
  const deck = placeOf(root, 'deck');
  if (!hand || !deck || !visible(hand) || !visible(deck)) return;
  const n = Number(e.count) || 1;
  const trip = (from, to, text, opts) => fly(h('span', { class: 'motion-cards', 'data-kind': e.type, 'data-motion-seat': String(e.seat) },
    cardBack('', { small: true }), h('span', { class: 'motion-count' }, text)), from, to, opts);
  const delay = Math.min(index * 40, 120);
  if (e.type === 'draw') trip(deck, hand, t('motion.cardsIn', { n }), { delay, duration: MS - delay });
  else if (e.type === 'exchange') trip(hand, deck, t('motion.cardsOut', { n }), { delay, duration: MS - delay });
  else {
    // One card back into the deck and a new one out (a revealed card replaced, a block's card returned).
    trip(hand, deck, t('motion.cardsOut', { n: 1 }), { duration: MS / 2 });
    trip(deck, hand, t('motion.cardsIn', { n: 1 }), { delay: MS / 2, duration: MS / 2 });
  }
}

// A card shown to win a challenge: public from then on. One's own is already face up in one's hand;
// another seat's turns over on top of its face-down cards, stays a moment, and goes.
function revealed(root, c, view, seat, card) {
  const hand = part(root, c, seat, '.hand');
  if (!hand) return;
  if (seat === c.you) {
    const mine = (view.players[seat] && view.players[seat].hidden) || [];
    const i = Array.isArray(mine) ? mine.indexOf(card) : -1;
    const el = i >= 0 ? hand.children[i] : null;
    if (el && !el.classList.contains('lost')) flip(el);
    return;
  }
  const back = hand.querySelector('.card-art.back') || hand;
  if (!visible(back)) return;
  const r = back.getBoundingClientRect();
  const el = h('div', { class: 'motion-reveal', 'data-motion-seat': String(seat), 'data-motion-card': card },
    roleCard(card, t(`capitol.roles.${card}`), { small: true, aria: '' }));
  Object.assign(el.style, { left: `${r.left}px`, top: `${r.top}px`, width: `${r.width}px` });
  layer().appendChild(el);
  flip(el);
  setTimeout(() => {
    if (!el.isConnected) return;
    drop(el, el.animate([{ opacity: 1 }, { opacity: 0 }], { duration: 200, fill: 'forwards' }));
  }, MS + REVEAL_HOLD);
}

// ---- plaques: a claim on its claimant's seat, while the view says it is pending ---------------------------
// Drawn as the seat's ::after (motion.css) from a data attribute: nothing is added to the seat's
// text or its accessible name (the banner says the claim already). It pops up when it is new.

function plaques(root, c, before, on) {
  if (!on || c.view.game !== 'capitol') return;
  const now = plaquesOf(c.view);
  const was = before ? plaquesOf(before) : new Map();
  for (const [seat, plaque] of now) {
    const el = seatEl(root, c, seat);
    if (!el) continue;
    if (getComputedStyle(el).position === 'static') el.classList.add('motion-anchor');
    el.dataset.motionPlaque = plaque.text;
    el.dataset.motionPlaqueKind = plaque.kind;
    const old = was.get(seat);
    if (!old || old.text !== plaque.text) {
      el.animate([{ transform: 'scale(.4)', opacity: 0 }, { transform: 'scale(1.08)', opacity: 1, offset: 0.7 }, { transform: 'none', opacity: 1 }],
        { duration: 300, easing: 'ease-out', pseudoElement: '::after' });
    }
  }
}

// seat → {kind, text}: the action's claim, a block's claim, or the card shown to win a challenge.
function plaquesOf(view) {
  const out = new Map();
  const p = view.pending;
  if (!p) return out;
  const role = (r) => t(`capitol.roles.${r}`);
  if (typeof p.actor === 'number' && p.claim) out.set(p.actor, { kind: 'claim', text: t('motion.claims', { role: role(p.claim) }) });
  if (typeof p.blocker === 'number' && p.block_claim) out.set(p.blocker, { kind: 'block', text: t('motion.blocks', { role: role(p.block_claim) }) });
  if (p.reveal && typeof p.reveal.seat === 'number' && p.reveal.card) {
    out.set(p.reveal.seat, { kind: 'shown', text: t('motion.shown', { role: role(p.reveal.card) }) });
  }
  return out;
}

// ---- Conspiranoicos --------------------------------------------------------------------------------------

function tellConspiranoicos(root, before, view) {
  const jobs = [];
  const was = (before.table && before.table.plays) || [];
  const now = (view.table && view.table.plays) || [];
  const slots = root.querySelectorAll('.table-area .plays .play-slot');
  now.forEach((x, s) => {
    // A play turned face up (both are shown at once): a card id where a back or nothing was.
    if (typeof x === 'string' && !/^[GIAR]$/.test(x) && x !== was[s] && slots[s]) {
      const card = slots[s].querySelector('.card-art, svg');
      if (card) jobs.push(() => flip(card));
    }
  });
  const pyrWas = before.pyramid || [];
  (view.pyramid || []).forEach((x, i) => {
    if (!x || JSON.stringify(x) === JSON.stringify(pyrWas[i] || null)) return;
    const slot = root.querySelector(`.pyramid [data-slot="${i + 1}"]`);
    const card = slot && slot.querySelector('svg');
    if (card) jobs.push(() => flip(card));
  });
  for (const job of jobs) job();
}

// ---- the switch ------------------------------------------------------------------------------------------

// For the table-talk bar, beside the sound switch: remembered; disabled while the system asks for
// reduced motion (which the switch could not override).
export function toggle(rerender) {
  const sys = reduced();
  const on = !off && !sys;
  const label = sys ? t('motion.reduced') : t(on ? 'motion.turnOff' : 'motion.turnOn');
  return h('button', { type: 'button', class: 'ghost small icon-btn motion-toggle', 'data-k': 'motion',
    'aria-pressed': String(on), disabled: sys, title: label, 'aria-label': label,
    onclick: () => { off = !off; keep(!off); if (off) clearLayer(); rerender(); } }, on ? '✨' : '💤');
}
