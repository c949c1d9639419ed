// The end of a game, above its table: who won, its recap cards (js/recap.js), the game's own detail (Capitol's claims, the
// Conspiranoicos scores), a standing room's standings, a rematch or a new room, the replay.
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { isHost } from '../store.js';
import { endOffer } from '../coach.js';
import { recapPanel } from '../recap.js';

export function render(app, c, mod) {
  const { state } = app;
  const winners = c.view.winners || [];
  const youWon = c.you !== null && winners.includes(c.you);
  const names = winners.map((w) => (w === c.you ? t('common.you') : c.name(w)));
  const title = youWon ? (winners.length > 1 ? t('end.sharedYou') : t('end.youWin'))
    : t('end.winners', { names: names.join(' & ') });
  return h('section', { class: ['panel', 'end', youWon && 'won'], 'aria-labelledby': 'end-h', 'data-testid': 'end' },
    h('h2', { id: 'end-h' }, title),
    recapPanel(app, c, mod),
    mod.endDetail ? mod.endDetail(c) : null,
    endOffer(app, c.view.game || (state.room && state.room.game)),
    app.standings(),
    h('div', { class: 'row' },
      isHost(state) ? h('button', { type: 'button', class: 'primary', 'data-k': 'rematch',
        onclick: () => app.hostCall((api, token) => api.rematch(state.code, token)) }, t('end.rematch'))
        : (!state.spectator ? h('p', { class: 'muted' }, t('end.waitRematch')) : null),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'new-room', onclick: app.goHome }, t('end.newRoom')),
      replayLink(app)));
}

// The finished game's replay viewer (js/replay.js); the fragment tells it which stored seat to use.
// A private room's game opens only for its players (a seat this browser holds): nobody else is
// offered a link that would refuse them.
function replayLink(app) {
  const { state } = app;
  const id = state.room && state.room.game_id;
  if (!id) return null;
  const open = state.room.settings && state.room.settings.public;
  if (!open && !state.token && !(state.saved && state.saved.token)) return null;
  return h('a', { class: 'button secondary', 'data-k': 'replay', target: '_blank', rel: 'noopener',
    href: `${app.base || ''}/replay/${encodeURIComponent(id)}#room=${encodeURIComponent(state.code || '')}` }, t('replay.open'));
}
