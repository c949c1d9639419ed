// A standing room's standings (GET /api/rooms/{code}/standings): a panel for the lobby, the join
// screen and the end screen. Fetched when the room's last game changes (and at most every few
// seconds), kept per room, and filled in place when it arrives (the app re-renders on every message).
// Also: the host's reset, the player's own seat token to carry to a new device, and the claim of a
// name's history with such a token (POST /api/rooms/{code}/claim).
import { clear, h } from './dom.js';
import { has, t } from './i18n.js';

const cache = new Map(); // code -> { key, at, data }
const FRESH_MS = 5000;

function figureCells(per) {
  const shown = Object.entries(per || {}).filter(([k]) => k !== 'games' && k !== 'wins');
  return shown.map(([k, v]) => `${t(`standings.figures.${k}`)} ${v}`).join(' · ');
}

// Each player's per-game figures go on a line of their own under the player's row, across the table:
// as a fourth column they made a phone's page 470–500 px wide (issue 26).
function table(data) {
  if (!data.players.length) return h('p', { class: 'muted', 'data-testid': 'standings-empty' }, t('standings.none'));
  return h('table', { class: 'scores standings', 'data-testid': 'standings-table' },
    h('thead', null, h('tr', null,
      h('th', { scope: 'col' }, t('standings.player')), h('th', { scope: 'col' }, t('standings.games')),
      h('th', { scope: 'col' }, t('standings.wins')))),
    data.players.map((p) => h('tbody', { class: 'standing' },
      h('tr', { 'data-name': p.name },
        h('th', { scope: 'row' }, p.name),
        h('td', { class: 'num' }, String(p.games)),
        h('td', { class: 'num' }, String(p.wins))),
      h('tr', { class: 'standing-detail' },
        h('td', { class: 'small', colspan: 3, 'aria-label': `${p.name}, ${t('standings.detail')}` },
          Object.entries(p.by_game).map(([game, per]) => h('div', null,
            h('strong', null, `${t(`games.${game}.name`)}: `),
            t('standings.perGame', { games: per.games, wins: per.wins }),
            figureCells(per) ? ` · ${figureCells(per)}` : '')))))));
}

// Each game linked to its replay, unless it would refuse the reader (a private room's games are for
// its players: `linked` false for a spectator); then the list only names them.
function recent(data, base, open = false, linked = true) {
  const games = data.games.slice(-5).reverse();
  if (!games.length) return null;
  return h('details', { class: 'standings-games', open }, h('summary', null, t('standings.recent')),
    h('ul', null, games.map((g, i) => {
      const text = g.game ? `${t(`games.${g.game}.name`)}: ${(g.winners || []).join(' & ') || '—'}` : t('standings.nthGame', { n: data.games.length - i });
      return h('li', null, linked
        ? h('a', { href: `${base || ''}/replay/${encodeURIComponent(g.id)}#room=${encodeURIComponent(data.code)}`, target: '_blank', rel: 'noopener' }, text)
        : text);
    })));
}

function linkable(opts) {
  return !!(opts.token || (opts.room.settings && opts.room.settings.public));
}

// Any other room: its earlier games (before its rematches), each linked to its replay, in the lobby.
function pastGames(opts) {
  if (opts.room.status !== 'lobby') return null;
  const key = `past:${opts.room.game_id || ''}:${opts.room.status}`;
  const cached = cache.get(opts.code);
  const box = h('div', { class: 'past-games', 'data-testid': 'past-games' });
  const show = (target, data) => {
    clear(target);
    const list = data && recent(data, opts.base, true, linkable(opts));
    if (list) target.append(list);
  };
  if (cached && cached.data) show(box, cached.data);
  if (!cached || cached.key !== key) {
    cache.set(opts.code, { key, at: Date.now(), data: cached ? cached.data : null });
    opts.api.request('GET', `/api/rooms/${encodeURIComponent(opts.code)}/standings`).then((data) => {
      cache.set(opts.code, { key, at: Date.now(), data });
      const live = document.querySelector('[data-testid=past-games]');
      if (live) show(live, data);
    }).catch(() => { /* nothing to list */ });
  }
  return box;
}

// opts: { api, code, room, token, host, base, onToast(text, kind), onClaimed({seat, token, name}) }
export function standingsPanel(opts) {
  const { room } = opts;
  if (!room || !room.settings) return null;
  if (!room.settings.standing) return pastGames(opts);
  const body = h('div', { class: 'standings-body' });
  const panel = h('section', { class: 'panel standings-panel', 'data-testid': 'standings', 'aria-labelledby': 'standings-h' },
    h('h2', { id: 'standings-h' }, t('standings.title')),
    body);
  const key = `${room.game_id || ''}:${room.status}`;
  const cached = cache.get(opts.code);
  if (cached && cached.data) fill(body, cached.data, opts);
  else body.append(h('p', { class: 'muted' }, t('status.connecting')));
  if (!cached || cached.key !== key || Date.now() - cached.at > FRESH_MS) {
    cache.set(opts.code, { key, at: Date.now(), data: cached ? cached.data : null });
    opts.api.request('GET', `/api/rooms/${encodeURIComponent(opts.code)}/standings`).then((data) => {
      cache.set(opts.code, { key, at: Date.now(), data });
      // The screen may have been drawn again meanwhile: fill whichever panel is on the page now.
      refill(data, opts);
    }).catch(() => { /* the room's own messages still flow; the next render tries again */ });
  }
  return panel;
}

function fill(target, data, opts) {
  clear(target);
  target.append(table(data));
  const list = recent(data, opts.base, false, linkable(opts));
  if (list) target.append(list);
  target.append(tools(opts));
}

// Fill whichever standings panel is on the page now (the screen may have been drawn again meanwhile).
function refill(data, opts) {
  const live = document.querySelector('[data-testid=standings] .standings-body');
  if (live) fill(live, data, opts);
}

function tools(opts) {
  const out = h('div', { class: 'standings-tools' });
  if (opts.token) {
    out.append(h('details', null, h('summary', null, t('standings.otherDevice')),
      h('p', { class: 'muted small' }, t('standings.keyHelp')),
      h('button', { type: 'button', class: 'secondary small', 'data-k': 'copy-seat-key',
        onclick: async () => {
          try { await navigator.clipboard.writeText(opts.token); opts.onToast(t('standings.keyCopied')); } catch { prompt('', opts.token); }
        } }, t('standings.copyKey'))));
  } else if (opts.room.status === 'lobby') {
    out.append(claimForm(opts));
  }
  if (opts.host) {
    out.append(h('button', { type: 'button', class: 'ghost small', 'data-k': 'reset-standings',
      onclick: async () => {
        if (!confirm(t('standings.resetConfirm'))) return;
        try {
          const data = await opts.api.request('POST', `/api/rooms/${encodeURIComponent(opts.code)}/standings/reset`, {}, opts.token);
          const current = cache.get(opts.code);
          cache.set(opts.code, { key: current ? current.key : '', at: Date.now(), data });
          refill(data, opts);
          opts.onToast(t('standings.resetDone'));
        } catch (err) { opts.onToast(err.message, 'error'); }
      } }, t('standings.reset')));
  }
  return out;
}

// On a new device: paste the seat key copied on the old one to sit down under that name again.
function claimForm(opts) {
  return h('form', { class: 'claim', 'data-testid': 'claim-form',
    onsubmit: async (ev) => {
      ev.preventDefault();
      const key = ev.target.elements.key.value.trim();
      if (!key) return;
      try {
        const res = await opts.api.request('POST', `/api/rooms/${encodeURIComponent(opts.code)}/claim`, { token: key });
        opts.onClaimed(res);
      } catch (err) {
        opts.onToast(has(`standings.claimErrors.${err.code}`) ? t(`standings.claimErrors.${err.code}`) : err.message, 'error');
      }
    } },
  h('label', { class: 'field' }, h('span', null, t('standings.claimLabel')),
    h('input', { name: 'key', required: true, maxlength: 200, autocomplete: 'off', 'data-k': 'claim-key' })),
  h('button', { type: 'submit', class: 'secondary', 'data-k': 'claim' }, t('standings.claim')));
}
