// The lobby: the seats (kick, add a bot, start), the invitation (code, link, QR), the room's options
// (the host edits them; the others read them), the game switch and a standing room's standings.
import { joinLink } from '../config.js';
import { h } from '../dom.js';
import { copy } from '../frame.js';
import { optionsEditor, optionSummary } from '../forms.js';
import { botChoices, gameNames, publicUrl, seatLimits } from '../info.js';
import { t } from '../i18n.js';
import { twinName } from '../names.js';
import { qrSvg } from '../qr.js';
import { isHost } from '../store.js';

export function render(app) {
  const { state } = app;
  const room = state.room;
  if (!room) return h('p', { class: 'muted' }, t('status.connecting'));
  const host = isHost(state);
  const count = room.seats.length;
  // While the server has not said (GET /api/info), the seats as they are: nothing to add, no start.
  const limits = seatLimits(room.game) || { min: Infinity, max: count };
  const link = joinLink(publicUrl() || app.base, state.code);
  const share = h('section', { class: 'panel share', 'aria-labelledby': 'share-h' },
    h('h2', { id: 'share-h' }, t('lobby.invite')),
    h('p', { class: 'code-big', 'aria-label': t('lobby.codeIs', { code: state.code.split('').join(' ') }) }, state.code),
    h('div', { class: 'row' },
      h('button', { type: 'button', class: 'secondary', 'data-k': 'copy-code', onclick: () => copy(state.code, t('lobby.code')) }, t('lobby.copyCode')),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'copy-link', onclick: () => copy(link, t('lobby.link')) }, t('lobby.copyLink'))),
    h('div', { class: 'qr', role: 'img', 'aria-label': t('lobby.qr') }, qrFor(link)),
    h('p', { class: 'link muted' }, link));

  const seatsPanel = h('section', { class: 'panel seats-panel', 'aria-labelledby': 'seats-h' },
    h('h2', { id: 'seats-h' }, t('lobby.players', { n: count, max: limits.max })),
    renamedNote(state),
    seatList(app, room, host),
    host && count < limits.max ? botAdder(app) : null,
    host
      ? h('button', { type: 'button', class: 'primary big', 'data-k': 'start', disabled: count < limits.min || count > limits.max,
        onclick: () => app.hostCall((api, token) => api.start(state.code, token)) },
      count < limits.min ? t('lobby.needPlayers', { n: limits.min }) : t('lobby.start'))
      : h('p', { class: 'waiting' }, state.spectator ? t('lobby.watching') : t('lobby.waitHost')),
    !state.spectator ? h('button', { type: 'button', class: 'ghost', 'data-k': 'leave', onclick: app.leaveRoom }, t('lobby.leave')) : null);

  const options = host ? optionsEditor(room.game, room, {
    // One option at a time (option_changes): a second choice made before the first one's echo
    // arrived must not send the options as they were drawn, without the first.
    onOption: (key, value) => app.hostCall((api, token) => api.patchRoom(state.code, token, { option_changes: { [key]: value } })),
    onSetting: (key, value) => app.hostCall((api, token) => api.patchRoom(state.code, token, { settings: { [key]: value } })),
  }) : null;
  const optionsPanel = h('section', { class: 'panel options-panel', 'aria-labelledby': 'opt-h' },
    h('h2', { id: 'opt-h' }, t('lobby.options')),
    host ? gamePicker(app, room) : null,
    options || optionSummary(room));

  return h('div', { class: 'lobby' },
    h('h1', { class: 'lobby-title' }, t(`games.${room.game}.name`)),
    h('div', { class: 'lobby-grid' }, seatsPanel, share, optionsPanel, app.standings()));
}

// A newcomer seated under another name than the one they asked for (someone at the table had it).
function renamedNote(state) {
  const saved = state.saved;
  if (state.spectator || !saved || !saved.renamed || !saved.name) return null;
  return h('p', { class: 'notice', role: 'status', 'data-testid': 'renamed' }, t('join.renamed', { name: saved.name }));
}

export function seatList(app, room, host) {
  const { state } = app;
  const seats = (room && room.seats) || [];
  const mine = (s) => s.seat === state.seat && !state.spectator;
  return h('ul', { class: 'seats', 'aria-label': t('lobby.seats') },
    seats.map((s) => h('li', { class: ['seat', mine(s) && 'me'] },
      h('span', { class: ['dot', s.connected || s.bot ? 'on' : 'off'], title: t(s.connected || s.bot ? 'lobby.connected' : 'lobby.disconnected') }),
      h('span', { class: 'seat-name' }, twinName(s, seats)),
      s.host ? h('span', { class: 'tag host' }, t('lobby.host')) : null,
      // A numbered bot's name says its personality already (names.js); a seat saved before says it here.
      s.bot ? h('span', { class: 'tag bot' }, t('lobby.bot'), s.level && !Number.isInteger(s.bot_number) ? ` · ${t(`levels.${s.level}`) === `levels.${s.level}` ? s.level : t(`levels.${s.level}`)}` : '') : null,
      mine(s) ? h('span', { class: 'tag you' }, t('common.you')) : null,
      s.afk || s.left ? h('span', { class: 'tag away' }, t('common.away')) : null,
      host && s.seat !== state.seat ? h('button', { type: 'button', class: 'ghost small', 'data-k': `kick-${s.seat}`,
        'aria-label': t('lobby.kickName', { name: twinName(s, seats) }),
        onclick: () => app.hostCall((api, token) => api.kick(state.code, token, s.seat, s.id)) }, t('lobby.kick')) : null)));
}

// The host may switch the table to another game between games (a standing room's evening goes
// on with another game; PATCH {"game"}: the server refuses it if the seats do not fit).
function gamePicker(app, room) {
  return h('label', { class: 'field inline' }, h('span', null, t('lobby.game')),
    h('select', { 'data-k': 'game', onchange: (ev) => {
      const game = ev.target.value;
      app.hostCall(async (api, token) => {
        try {
          await api.patchRoom(app.state.code, token, { game });
        } finally {
          app.render(); // a refused switch shows the room's game again
        }
      });
    } }, gameNames(app.tables).map((g) => h('option', { value: g, selected: room.game === g }, t(`games.${g}.name`)))));
}

// The levels, the game's named personalities (docs/bots.md) and a mystery bot, each described.
function botAdder(app) {
  const { state } = app;
  const about = (lv) => t(`levels.about.${lv || 'default'}`);
  const select = h('select', { 'aria-label': t('lobby.botLevel'), 'data-k': 'bot-level' },
    botChoices(state.room.game).map((lv) => h('option', { value: lv, selected: state.botLevel === lv }, t(`levels.${lv || 'default'}`))));
  const line = h('p', { class: 'muted small bot-about', 'data-testid': 'bot-about' }, about(state.botLevel || ''));
  select.addEventListener('change', () => { app.update({ botLevel: select.value }, false); line.textContent = about(select.value); });
  return h('div', { class: 'row bot-adder' },
    select, line,
    h('button', { type: 'button', class: 'secondary', 'data-k': 'add-bot',
      onclick: () => app.hostCall((api, token) => api.addBots(state.code, token, 1, select.value || undefined)) }, t('lobby.addBot')));
}

// The QR code is drawn once per link (every lobby message redraws the lobby).
let qr = { link: null, node: null };
function qrFor(link) {
  if (qr.link !== link) qr = { link, node: qrSvg(link) };
  return qr.node.cloneNode(true);
}
