// The replay viewer (/replay/GAME_ID[?step=N]): a finished game step by step, every card face up.
// The server builds the steps (GET /api/games/{id}/replay: the engine's own states, Capitol's claims
// marked); this page only draws them. A private room's game needs one of its players' tokens, which
// this browser keeps per room (the same storage as the game page).
import { Api } from './api.js';
import { evidenceCard, roleCard } from './cards.js';
import { serverBase } from './config.js';
import { clear, h } from './dom.js';
import { langTag, t } from './i18n.js';
import { languageMenu } from './langmenu.js';
import * as capitol from './capitol.js';
import * as consp from './conspiranoicos.js';
import { shownName } from './names.js';

const TOKEN_PREFIX = 'conflictology:room:';
const MAX_TRIES = 8; // stored seats tried for a private game (each try is a request the server counts)

// `error` is an i18n key, said in whichever language the reader then picks.
const R = { api: null, id: '', data: null, token: null, step: 0, error: null };
const app = document.getElementById('app');
const live = document.getElementById('live');

function gameIdFromPath() {
  const m = /^\/replay\/([A-Za-z0-9]{1,64})\/?$/.exec(location.pathname);
  return m ? m[1] : '';
}

// Tokens this browser holds, in the order to try them: the room named in the address's fragment
// (#room=CODE, from the end screen) first, then none (a public room's game), then every other stored
// seat (at most MAX_TRIES; each try is a request the server counts).
function candidates() {
  const hint = /room=([A-Za-z0-9]+)/.exec(location.hash || '');
  const out = [];
  const seen = new Set();
  const add = (key) => {
    try {
      const saved = JSON.parse(localStorage.getItem(key) || 'null');
      if (saved && saved.token && !seen.has(saved.token)) { seen.add(saved.token); out.push(saved.token); }
    } catch { /* storage blocked or malformed */ }
  };
  if (hint) add(TOKEN_PREFIX + hint[1].toUpperCase());
  out.push(null);
  try {
    for (let i = 0; i < localStorage.length; i += 1) {
      const key = localStorage.key(i);
      if (key && key.startsWith(TOKEN_PREFIX)) add(key);
    }
  } catch { /* ignore */ }
  return out.slice(0, MAX_TRIES);
}

async function load() {
  const path = `/api/games/${encodeURIComponent(R.id)}/replay`;
  let refused = null;
  for (const token of candidates()) {
    try {
      const data = await R.api.request('GET', path, undefined, token || undefined);
      R.token = token;
      return data;
    } catch (err) {
      if (err.status !== 401 && err.status !== 403) throw err;
      refused = err;
    }
  }
  throw refused;
}

// ---- helpers ------------------------------------------------------------------------------------------

function name(seat) {
  const p = R.data && R.data.players[seat];
  return p ? shownName(p) : t('common.seat', { n: seat });
}

function ctx(view) {
  return { name, you: null, view, legal: [], ui: {}, room: null, act: () => {} };
}

function fullView(step) {
  return { ...R.data.static, ...step.view };
}

function roleChip(r, lost = false) {
  const label = t(`capitol.roles.${r}`);
  return h('span', { class: lost ? 'lost' : null, 'data-card': r, 'data-lost': lost ? 'true' : null },
    roleCard(r, label, { small: true, aria: lost ? `${label} (${t('capitol.lostCard')})` : label }));
}

function evidence(id, { facedown = false } = {}) {
  if (!id) return null;
  const card = consp.cardInfo(id);
  const special = card.special ? t(`conspiranoicos.specials.${card.special}`) : '';
  const challenge = consp.challengeText(card.challenge, card.challenge_text);
  const label = `${special ? special + ', ' : ''}${t('conspiranoicos.value', { n: card.value })}${facedown ? ' (' + t('replay.faceDown') + ')' : ''}`;
  return h('span', { class: facedown ? 'facedown' : null, 'data-card': id, 'data-facedown': facedown ? 'true' : null },
    evidenceCard(card, { name: special, challenge }, { small: true, label }));
}

// Capitol's marks for the log entries shown at this step: a claim true or a bluff, a challenge won or
// lost. The replay sends the game's claims once (each with the log entry it was made at, `at`, and
// its challenge's, `challenge_at`): a step shows those its log has reached.
function marksOf(claims, logged) {
  const marks = new Map();
  for (const k of claims || []) {
    if (k.at >= logged) continue;
    marks.set(k.at, [...(marks.get(k.at) || []), k.honest ? 'true' : 'bluff']);
    if (k.challenged && k.challenge_at < logged) {
      marks.set(k.challenge_at, [...(marks.get(k.challenge_at) || []), k.won ? 'won' : 'lost']);
    }
  }
  return marks;
}

function markChip(kind) {
  return h('span', { class: ['mark', kind], 'data-mark': kind }, t(`replay.mark.${kind}`));
}

function logItem(c, mod, i, marks, cls) {
  const e = R.data.log[i];
  return h('li', { class: cls, 'data-i': i, value: i + 1 },
    mod.logLine(c, e), (marks.get(i) || []).map(markChip));
}

// ---- the boards ---------------------------------------------------------------------------------------

function capitolBoard(view, last) {
  const winners = new Set(last ? R.data.winners : []);
  const seats = (view.players || []).map((p, seat) => h('article', {
    class: ['replay-seat', view.turn === seat && !last && 'actor', p.alive === false && 'out', winners.has(seat) && 'winner'],
    'data-seat': seat,
  },
  h('h3', null, name(seat),
    view.turn === seat && !last ? h('span', { class: 'tag turn-tag' }, t('capitol.turnTag')) : null,
    p.alive === false ? h('span', { class: 'tag out' }, t('capitol.eliminated')) : null,
    winners.has(seat) ? h('span', { class: 'tag win-tag' }, t('replay.winner')) : null),
  h('div', { class: 'purse' }, t('capitol.money', { n: p.money })),
  h('div', { class: 'replay-cards', 'data-testid': 'hidden' }, (p.hidden || []).map((r) => roleChip(r))),
  (p.revealed || []).length ? h('div', { class: 'replay-cards', 'data-testid': 'revealed' }, p.revealed.map((r) => roleChip(r, true))) : null));
  const pending = view.pending;
  return h('div', null,
    h('div', { class: 'replay-centre' },
      h('div', { class: 'pile treasury' }, h('span', { class: 'pile-label' }, t('capitol.treasury')),
        h('span', { class: 'money-big' }, t('capitol.money', { n: view.treasury }))),
      h('div', null, h('div', { class: 'replay-label' }, t('capitol.deckCount', { n: view.deck })),
        h('div', { class: 'replay-cards', 'data-testid': 'deck' }, (view.deck_cards || []).map((r) => roleChip(r)))),
      pending && pending.awaiting && pending.awaiting.length
        ? h('p', { class: 'muted' }, t('replay.awaiting', { names: pending.awaiting.map(name).join(', ') })) : null),
    h('section', { class: 'replay-board', 'aria-label': t('capitol.players') }, seats));
}

function conspBoard(view, last) {
  consp.catalogue(view);
  const winners = new Set(last ? R.data.winners : []);
  const plays = (view.table && view.table.plays) || [];
  const seats = (view.players || []).map((p, seat) => h('article', {
    class: ['replay-seat', winners.has(seat) && 'winner'], 'data-seat': seat,
  },
  h('h3', null, name(seat), winners.has(seat) ? h('span', { class: 'tag win-tag' }, t('replay.winner')) : null,
    view.scores ? h('span', { class: 'tag' }, t('replay.points', { n: view.scores[seat] })) : null),
  h('div', { class: 'replay-label' }, t('replay.hand')),
  h('div', { class: 'replay-cards', 'data-testid': 'hand' }, (p.hand || []).map((id) => evidence(id))),
  plays[seat] ? h('div', { class: 'replay-label' }, t('replay.play')) : null,
  plays[seat] ? h('div', { class: 'replay-cards', 'data-testid': 'play' }, evidence(plays[seat])) : null,
  h('div', { class: 'replay-label' }, t('replay.zone')),
  h('div', { class: 'replay-cards', 'data-testid': 'zone' }, (p.zone || []).map((id) => evidence(id))),
  (p.row || []).length ? h('div', { class: 'replay-label' }, t('replay.row')) : null,
  (p.row || []).length ? h('div', { class: 'replay-cards', 'data-testid': 'row' }, p.row.map((id) => evidence(id))) : null,
  h('div', { class: 'replay-label' }, t('replay.draw', { n: (p.draw_cards || []).length })),
  h('div', { class: 'replay-cards', 'data-testid': 'draw' }, (p.draw_cards || []).map((id) => evidence(id)))));
  // The Pyramid, 3-2-1 from the bottom: slots 1–3, 4–5, 6 (a face-down card is outlined).
  const slot = (k) => {
    const s = (view.pyramid || [])[k - 1];
    return h('div', { class: 'slot', 'data-slot': k },
      s ? evidence(s.card, { facedown: !s.face_up }) : h('span', { class: 'muted' }, '—'), String(k));
  };
  const pyramid = h('div', { class: 'replay-pyramid', 'data-testid': 'pyramid', 'aria-label': t('replay.pyramid') },
    h('div', { class: 'prow' }, slot(6)), h('div', { class: 'prow' }, slot(4), slot(5)),
    h('div', { class: 'prow' }, slot(1), slot(2), slot(3)));
  const round = view.phase === 'over' ? t('replay.scoring') : t('replay.round', { n: view.round });
  // A challenge card won and sorted into a row is shown there only (at the end the Final Challenge
  // sat both in its slot and in the winner's row).
  const holder = (id) => (view.players || []).findIndex((p) => (p.row || []).includes(id) || (p.zone || []).includes(id));
  const onPyramid = (id) => (view.pyramid || []).some((s) => s && s.card === id);
  const fcHolder = holder(view.final_challenge_card);
  const fcPlaced = fcHolder >= 0 ? t('replay.finalPlaced', { name: name(fcHolder) })
    : onPyramid(view.final_challenge_card) ? t('replay.finalOnPyramid') : null;
  return h('div', null,
    h('div', { class: 'replay-centre' },
      h('div', null, h('div', { class: 'replay-label', 'data-testid': 'round' }, round),
        view.challenge && holder(view.challenge) < 0 && !onPyramid(view.challenge) ? evidence(view.challenge) : null),
      h('div', { 'data-testid': 'final-challenge' }, h('div', { class: 'replay-label' }, t('replay.finalChallenge')),
        fcPlaced ? h('span', { class: 'muted small' }, fcPlaced)
          : evidence(view.final_challenge_card, { facedown: !view.final_challenge })),
      h('div', null, h('div', { class: 'replay-label' }, t('replay.pyramid')), pyramid)),
    h('section', { class: 'replay-board' }, seats));
}

// ---- the page -----------------------------------------------------------------------------------------

function setStep(n, { focus = false } = {}) {
  const last = R.data.steps.length - 1;
  R.step = Math.max(0, Math.min(last, Number.isFinite(n) ? n : 0));
  const url = new URL(location.href);
  url.hash = '';
  url.searchParams.set('step', String(R.step));
  history.replaceState(null, '', url);
  render();
  if (focus) document.querySelector('[data-k=slider]')?.focus();
}

async function download(path, filename) {
  const headers = R.token ? { Authorization: `Bearer ${R.token}` } : {};
  const res = await fetch((R.api.base || '') + path, { headers });
  if (!res.ok) return;
  const blob = await res.blob();
  const a = h('a', { href: URL.createObjectURL(blob), download: filename });
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

function shareLink() {
  const url = new URL(location.href);
  url.hash = '';
  url.search = '';
  url.searchParams.set('step', String(R.step));
  return url.toString();
}

// Always a way back: to the game's room, else to the room the link came from (#room=CODE), else home
// (a refused or missing game has no data to name its room).
function backLink(d) {
  const hint = /room=([A-Za-z0-9]+)/.exec(location.hash || '');
  const room = d ? d.room : hint && hint[1];
  if (room) return h('a', { href: `/?room=${encodeURIComponent(room)}`, class: 'ghost', 'data-k': 'back' }, t('replay.backToRoom'));
  return h('a', { href: '/', class: 'ghost', 'data-k': 'back' }, t('common.home'));
}

function header() {
  const d = R.data;
  return h('header', { class: 'replay-head' },
    h('h1', null, t('replay.title', { game: d ? d.title : '' })),
    h('div', { class: 'row' },
      backLink(d),
      languageMenu(() => render())));
}

function render() {
  clear(app);
  document.documentElement.lang = langTag();
  if (R.error) {
    app.appendChild(header());
    app.appendChild(h('p', { class: 'replay-error', 'data-testid': 'replay-error' }, t(R.error)));
    return;
  }
  if (!R.data) {
    app.appendChild(header());
    app.appendChild(h('p', { class: 'muted' }, t('status.connecting')));
    return;
  }
  const d = R.data;
  const steps = d.steps;
  const step = steps[R.step];
  const last = R.step === steps.length - 1;
  const view = fullView(step);
  const mod = d.game === 'capitol' ? capitol : consp;
  if (d.game !== 'capitol') consp.catalogue(view);
  const c = ctx(view);
  const marks = marksOf(d.claims, step.log);
  const from = R.step > 0 ? steps[R.step - 1].log : 0;
  const fresh = [];
  for (let i = from; i < step.log; i += 1) fresh.push(logItem(c, mod, i, marks, null));

  const controls = h('div', { class: 'replay-controls', role: 'group', 'aria-label': t('replay.controls') },
    h('button', { type: 'button', class: 'secondary', 'data-k': 'first', onclick: () => setStep(0), 'aria-label': t('replay.first') }, '«'),
    h('button', { type: 'button', class: 'secondary', 'data-k': 'prev', onclick: () => setStep(R.step - 1), 'aria-label': t('replay.prev') }, '◀'),
    h('input', {
      type: 'range', min: 0, max: steps.length - 1, value: R.step, 'data-k': 'slider', 'aria-label': t('replay.scrub'),
      oninput: (e) => setStep(Number(e.target.value), { focus: true }),
    }),
    h('button', { type: 'button', class: 'secondary', 'data-k': 'next', onclick: () => setStep(R.step + 1), 'aria-label': t('replay.next') }, '▶'),
    h('button', { type: 'button', class: 'secondary', 'data-k': 'last', onclick: () => setStep(steps.length - 1), 'aria-label': t('replay.last') }, '»'),
    h('span', { class: 'stepno', 'data-testid': 'replay-step' }, t('replay.step', { n: R.step, of: steps.length - 1 })));

  const who = step.seat !== null && step.seat !== undefined
    ? t(`replay.by.${step.by || 'player'}`, { name: name(step.seat) }) : t('replay.deal');
  const now = h('section', { class: 'replay-now', 'data-testid': 'replay-now', 'aria-live': 'polite' },
    h('div', { class: 'replay-label' }, who),
    fresh.length ? h('ol', null, fresh) : h('p', { class: 'muted' }, t('replay.nothingPublic')));

  const board = d.game === 'capitol' ? capitolBoard(view, last) : conspBoard(view, last);
  const items = [];
  for (let i = 0; i < d.log.length; i += 1) {
    items.push(logItem(c, mod, i, marks, i >= step.log ? 'later' : i >= from ? 'current' : null));
  }
  const logList = h('ol', null, items);
  const log = h('section', { class: 'log replay-log', 'aria-label': t('common.log') }, h('h3', null, t('common.log')), logList);
  requestAnimationFrame(() => {
    const cur = logList.querySelector('li.current') || logList.querySelector('li:not(.later):last-of-type');
    if (cur) logList.scrollTop = Math.max(0, cur.offsetTop - logList.offsetTop - 120);
  });

  const end = last ? h('section', { class: 'panel end', 'data-testid': 'replay-end' },
    h('h2', null, t('end.winners', { names: d.winners.map(name).join(' & ') })),
    mod.endDetail ? mod.endDetail(c) : null,
    figuresTable(d)) : null;

  const exports = h('div', { class: 'replay-exports' },
    h('button', { type: 'button', class: 'secondary', 'data-k': 'share',
      onclick: async () => {
        try { await navigator.clipboard.writeText(shareLink()); live.textContent = t('replay.copied'); } catch { prompt('', shareLink()); }
      } }, t('replay.share')),
    h('button', { type: 'button', class: 'secondary', 'data-k': 'export-json',
      onclick: () => download(`/api/games/${encodeURIComponent(d.id)}`, `conflictology-${d.game}-${d.id.slice(0, 12)}.json`) },
    t('replay.exportJson')),
    h('button', { type: 'button', class: 'secondary', 'data-k': 'export-text',
      onclick: () => download(`/api/games/${encodeURIComponent(d.id)}/record.txt`, `conflictology-${d.game}-${d.id.slice(0, 12)}.txt`) },
    t('replay.exportText')));

  const players = h('p', { class: 'muted small' }, d.players.map((p) => shownName(p) + (p.bot && !Number.isInteger(p.bot_number) ? ` (${t('lobby.bot')})` : '')).join(' · '));
  for (const part of [header(), players, controls, now, board, end, log, exports]) if (part) app.appendChild(part);
}

function figuresTable(d) {
  const keys = [...new Set(d.figures.flatMap((f) => Object.keys(f)))];
  if (!keys.length) return null;
  return h('table', { class: 'scores', 'data-testid': 'figures' },
    h('thead', null, h('tr', null, h('th', null, ''), keys.map((k) => h('th', { scope: 'col' }, t(`standings.figures.${k}`))))),
    h('tbody', null, d.figures.map((f, seat) => h('tr', null, h('th', { scope: 'row' }, name(seat)),
      keys.map((k) => h('td', { class: 'num' }, String(f[k] ?? 0)))))));
}

document.addEventListener('keydown', (e) => {
  if (!R.data || e.altKey || e.ctrlKey || e.metaKey) return;
  if (e.target && e.target.type === 'range') return; // the slider steps by itself
  if (e.target && (e.target.tagName === 'INPUT' || e.target.tagName === 'TEXTAREA')) return;
  const moves = { ArrowLeft: R.step - 1, ArrowRight: R.step + 1, Home: 0, End: R.data.steps.length - 1 };
  if (e.key in moves) {
    e.preventDefault();
    setStep(moves[e.key]);
  }
});

async function main() {
  R.id = gameIdFromPath();
  R.api = new Api(await serverBase());
  render();
  if (!R.id) {
    R.error = 'replay.noGame';
    render();
    return;
  }
  try {
    R.data = await load();
  } catch (err) {
    R.error = err.status === 409 ? 'replay.notOver' : err.status === 404 ? 'replay.noGame'
      : err.status === 401 || err.status === 403 ? 'replay.private' : 'errors.unknown';
    render();
    return;
  }
  const asked = Number(new URLSearchParams(location.search).get('step'));
  setStep(Number.isFinite(asked) && asked >= 0 ? Math.floor(asked) : 0);
}

main();
