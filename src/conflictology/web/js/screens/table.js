// The table: the banner (what is happening, what you must do, the clock), a clock that ran out, the
// table-talk bar, the end panel once the game is over, the game's own table (capitol.js,
// conspiranoicos.js), the room's options and leaving (asked first mid-game); and the mini-table.
import { h } from '../dom.js';
import { countdown } from '../frame.js';
import { optionSummary } from '../forms.js';
import { t } from '../i18n.js';
import { nameOf } from '../names.js';
import { gameOn, isHost, isOver, Screen, viewer } from '../store.js';
import * as coach from '../coach.js';
import * as cues from '../cues.js';
import * as motion from '../motion.js';
import * as pip from '../pip.js';
import * as talk from '../talk.js';
import * as end from './end.js';

let announced = '';

// What a game's module is given to draw (capitol.js, conspiranoicos.js).
export function context(app) {
  const { state } = app;
  const msg = state.msg || {};
  return {
    view: msg.view || {},
    legal: msg.legal || [],
    deadline: msg.deadline || null,
    you: viewer(state),
    room: state.room,
    name: (seat) => nameOf(app.state.room, seat),
    act: app.act,
    busy: state.busy,
    ui: state.ui,
    rerender: app.render,
    t,
    lang: app.lang(),
  };
}

function tableModule(app, c) {
  const game = c.view.game || (app.state.room && app.state.room.game);
  return { game, mod: app.tables[game] };
}

export function render(app) {
  const { state } = app;
  const c = context(app);
  const { game, mod } = tableModule(app, c);
  if (!mod) return h('p', null, t('errors.unknown'));
  const banner = mod.banner(c);
  if (banner.text !== announced) {
    announced = banner.text;
    document.getElementById('live').textContent = banner.text;
  }
  // A decision awaits: say so in the tab's title too (players keep the video call in front).
  document.title = c.legal.length ? `● ${t('common.yourMove')} · Conflictology` : 'Conflictology';
  const over = c.view.winners && c.view.winners.length > 0 && c.legal.length === 0 && isOver(c.view);
  cues.update(wanted(app, c, banner));
  return h('div', { class: ['table-wrap', `game-${game}`] },
    h('div', { class: ['banner', banner.tone], 'data-testid': 'banner' },
      h('span', { class: 'banner-text' }, banner.text),
      c.deadline ? countdown(c.deadline, c.legal.length > 0) : null,
      state.spectator ? h('span', { class: 'tag' }, t('status.spectator')) : null),
    timeoutNote(app, c),
    talk.talkBar(talkEnv(app, c)),
    coach.panel(app, c),
    over ? end.render(app, c, mod) : null,
    mod.renderTable(c),
    h('div', { class: 'table-foot' },
      state.room ? h('details', { class: 'active-options' }, h('summary', null, t('lobby.options')), optionSummary(state.room)) : null,
      h('div', { class: 'row' },
        !state.spectator ? h('button', { type: 'button', class: 'ghost', 'data-k': 'leave', onclick: () => askLeave(app) }, t('lobby.leave')) : null)),
    state.confirmLeave ? leaveConfirm(app) : null);
}

// ---- clocks that ran out (issue 17.13) -------------------------------------------------------------------

function timeoutNote(app, c) {
  const note = app.state.timeouts.note;
  if (!note || Date.now() > note.until) return null;
  const mine = c.you !== null && note.seats.includes(c.you);
  const others = note.seats.filter((s) => s !== c.you).map((s) => c.name(s));
  const parts = [];
  if (mine) parts.push(t('clock.ranOutYou'));
  if (others.length) parts.push(t('clock.ranOut', { names: others.join(', ') }));
  return h('p', { class: 'timeout-note', role: 'status', 'data-testid': 'timeout-note' }, `⏱ ${parts.join(' ')}`);
}

// Marks the log entries a timeout made (the log shows its last 60 entries), once the table is drawn.
export function markTimeouts(app) {
  const { marks, logLen } = app.state.timeouts;
  const list = document.querySelector('.log-list');
  if (!list || !marks.length) return;
  const items = [...list.children];
  const offset = Math.max(0, (logLen || 0) - items.length);
  for (const mark of marks) {
    const names = mark.seats.map((s) => nameOf(app.state.room, s));
    for (let i = mark.from; i < mark.to; i += 1) {
      const li = items[i - offset];
      if (!li || li.classList.contains('timed-out') || !names.some((n) => li.textContent.includes(n))) continue;
      li.classList.add('timed-out');
      li.appendChild(h('span', { class: 'timed-out-mark' }, ` ⏱ ${t('clock.mark')}`));
      break;
    }
  }
}

// ---- beside the call: what the cues are told, the table-talk bar, the mini-table -------------------------

function wanted(app, c, banner) {
  const { state } = app;
  const msg = state.msg || {};
  const pause = msg.pause || null;
  if (!c.legal.length || state.spectator) return null;
  const kind = msg.timer || (pause && pause.timer) || (c.view.turn === c.you ? 'turn' : null);
  return { pending: true, key: `${state.code}|${JSON.stringify(c.legal)}`, kind, tone: banner.tone, text: banner.text,
    deadline: c.deadline, paused: !!pause };
}

function talkEnv(app, c) {
  const { state } = app;
  return {
    msg: state.msg, you: c.you, spectator: state.spectator, host: isHost(state), name: c.name,
    send: (obj) => app.send(obj),
    post: (what) => app.hostCall((api, token) => api.request('POST', `/api/rooms/${encodeURIComponent(state.code)}/${what}`, {}, token)),
    extras: [cues.muteButton(app.render), motion.toggle(app.render), cues.notifyToggle(app.render), pip.pipButton(() => miniTable(app))],
  };
}

function miniTable(app) {
  if (app.state.screen !== Screen.TABLE) return h('p', { class: 'muted' }, t('status.connecting'));
  const c = context(app);
  const { game, mod } = tableModule(app, c);
  if (!mod) return null;
  const banner = mod.banner(c);
  const pause = (app.state.msg && app.state.msg.pause) || null;
  return h('div', { class: ['mini-table', `game-${game}`] },
    h('div', { class: ['banner', banner.tone] },
      h('span', { class: 'banner-text' }, banner.text),
      pause ? h('span', { class: 'tag' }, pause.kind === 'hold' ? '✋' : '⏸') : null,
      c.deadline ? countdown(c.deadline, c.legal.length > 0) : null),
    mod.renderTable(c));
}

// ---- leaving mid-game (issue 17.2) -----------------------------------------------------------------------
// Leaving a game being played asks first; a bot plays the seat, and this browser keeps the token
// (marked `left`) so that it may take the seat back while the game lasts (POST …/rejoin).

function askLeave(app) {
  if (!gameOn(app.state)) { app.leaveRoom(); return; }
  app.update({ confirmLeave: true });
  const stay = document.querySelector('[data-k=leave-stay]');
  if (stay) stay.focus();
}

function leaveConfirm(app) {
  const close = () => app.update({ confirmLeave: false });
  return h('div', { class: 'leave-confirm', role: 'alertdialog', 'aria-modal': 'false', 'aria-labelledby': 'leave-h',
    'aria-describedby': 'leave-p', 'data-testid': 'leave-confirm',
    onkeydown: (ev) => { if (ev.key === 'Escape') close(); } },
  h('h2', { id: 'leave-h' }, t('leaving.title')),
  h('p', { id: 'leave-p' }, t('leaving.body')),
  h('div', { class: 'row' },
    h('button', { type: 'button', class: 'danger', 'data-k': 'leave-yes', onclick: app.leaveGame }, t('leaving.yes')),
    h('button', { type: 'button', class: 'secondary', 'data-k': 'leave-stay', onclick: close }, t('leaving.stay'))));
}
