// A join link opened with no seat yet (join), a seat left mid-game to take back (rejoin), a room
// that is gone, and the wait while a socket connects.
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { seatList } from './lobby.js';

export function render(app) {
  const { state } = app;
  if (state.canRejoin) return rejoin(app);
  const room = state.room || {};
  const canJoin = room.status === 'lobby';
  const watch = () => app.openRoom(state.code, { watch: true });
  return h('div', { class: 'panel join-room' },
    h('h2', null, t('join.title', { game: t(`games.${room.game}.name`) })),
    h('p', { class: 'code-big' }, state.code),
    seatList(app, room, false),
    canJoin
      ? h('form', { onsubmit: (ev) => { ev.preventDefault(); const n = ev.target.elements.name.value.trim(); if (n) app.joinRoom(state.code, n); } },
        h('label', { class: 'field' }, h('span', null, t('home.yourName')),
          h('input', { name: 'name', required: true, maxlength: 40, value: app.savedName(), autocomplete: 'nickname', 'data-k': 'join-name' })),
        h('div', { class: 'row' },
          h('button', { type: 'submit', class: 'primary', 'data-k': 'join' }, t('home.joinButton')),
          h('button', { type: 'button', class: 'secondary', 'data-k': 'watch', onclick: watch }, t('home.watch'))))
      : h('div', null, h('p', { class: 'muted' }, t('join.started')),
        h('button', { type: 'button', class: 'primary', 'data-k': 'watch', onclick: watch }, t('home.watch'))),
    app.standings());
}

function rejoin(app) {
  const { state } = app;
  const room = state.room || {};
  return h('div', { class: 'panel join-room', 'data-testid': 'rejoin' },
    h('h2', null, t('leaving.leftTitle', { game: t(`games.${room.game}.name`) })),
    h('p', { class: 'muted' }, t('leaving.leftBody')),
    h('div', { class: 'row' },
      h('button', { type: 'button', class: 'primary', 'data-k': 'rejoin', onclick: app.rejoinSeat }, t('leaving.rejoin')),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'watch', onclick: () => app.openRoom(state.code, { watch: true }) }, t('home.watch')),
      h('button', { type: 'button', class: 'ghost', 'data-k': 'home', onclick: app.goHome }, t('common.home'))));
}

export function gone(app) {
  const { state } = app;
  return h('div', { class: 'panel center' },
    h('h2', null, t(state.goneReason === 'notFound' ? 'gone.notFound' : 'gone.network')),
    h('p', { class: 'muted' }, state.code || ''),
    h('button', { type: 'button', class: 'primary', onclick: app.goHome, 'data-k': 'home' }, t('common.home')));
}

export function connecting() {
  return h('div', { class: 'panel center' }, h('p', { class: 'muted' }, t('status.connecting')));
}
