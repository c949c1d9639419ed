// The Conflictology client's entry point: one page, no build step. The server is authoritative: the
// socket's messages go through the store's reducer (store.js), and the current screen (screens/*.js)
// is drawn from the state; what the player does goes back as HTTP calls (api.js) and `act`s.
// This module holds the state, the seat this browser keeps per room (localStorage), and the moves
// between screens: opening a room, connecting, leaving, taking a seat back.
import { Api, ApiError } from './api.js';
import { Connection } from './connection.js';
import { IN_EXTENSION, serverBase } from './config.js';
import { clear, h } from './dom.js';
import { errorText, header, renderStatus, renderToast, showToast, tick } from './frame.js';
import { lang, langTag, t } from './i18n.js';
import * as info from './info.js';
import * as capitol from './capitol.js';
import * as conspiranoicos from './conspiranoicos.js';
import { standingsPanel } from './standings.js';
import { initialState, isHost, NOTE_MS, reduce, Screen } from './store.js';
import * as talk from './talk.js';
import * as cues from './cues.js';
import * as pip from './pip.js';
import * as motion from './motion.js';
import * as keys from './keys.js';
import * as install from './install.js';
import * as home from './screens/home.js';
import * as join from './screens/join.js';
import * as lobby from './screens/lobby.js';
import * as table from './screens/table.js';

// Each game's table (its banner, prompts, log lines and end detail).
const TABLES = Object.freeze({ capitol, conspiranoicos });
const SCREENS = Object.freeze({
  [Screen.HOME]: home.render,
  [Screen.JOIN]: join.render,
  [Screen.CONNECTING]: join.connecting,
  [Screen.LOBBY]: lobby.render,
  [Screen.TABLE]: table.render,
  [Screen.GONE]: join.gone,
});
const TOKEN_PREFIX = 'conflictology:room:';
const NAME_KEY = 'conflictology:name';
// The toolbar popup closes at every click outside it: reopening it returns to this room.
const LAST_KEY = 'conflictology:last';

let state = initialState();
let conn = null;

// What the screens are given: the state (read only; they change it through `update`) and the moves.
const app = {
  get state() { return state; },
  tables: TABLES,
  api: null,
  base: '',
  render,
  update,
  lang,
  act,
  send,
  hostCall,
  goHome,
  openRoom,
  joinRoom,
  createRoom,
  startPractice,
  leaveRoom,
  leaveGame,
  rejoinSeat,
  savedName: () => load(NAME_KEY) || '',
  standings: standingsFor,
};

function update(patch, redraw = true) {
  state = { ...state, ...patch };
  if (redraw) render();
}

// ---- storage --------------------------------------------------------------------------------------

function store(key, value) {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, JSON.stringify(value));
  } catch { /* private mode */ }
}

function load(key) {
  try { return JSON.parse(localStorage.getItem(key) || 'null'); } catch { return null; }
}

function savedSeat(code) { return code ? load(TOKEN_PREFIX + code) : null; }
function keepSeat(code, seat) { store(TOKEN_PREFIX + code, seat); }

// ---- navigation ----------------------------------------------------------------------------------

// Parameters that say how the page is shown rather than which room: they survive every rewrite of
// the address (the extension's full tab is `?tab=1`; dropping it made a reload come back as a popup).
const KEPT_PARAMS = ['tab'];

function setUrl(code, extra = {}) {
  const url = new URL(location.href);
  const kept = KEPT_PARAMS.map((k) => [k, url.searchParams.get(k)]).filter(([, v]) => v);
  url.search = '';
  for (const [k, v] of kept) url.searchParams.set(k, v);
  if (url.pathname.startsWith('/r/')) url.pathname = '/';
  if (code) url.searchParams.set('room', code);
  for (const [k, v] of Object.entries(extra)) if (v) url.searchParams.set(k, v);
  history.replaceState(null, '', url);
}

function goneReason(err) {
  return err instanceof ApiError && err.status === 404 ? 'notFound' : 'network';
}

async function openRoom(code, { watch = false } = {}) {
  if (!info.loaded()) loadInfo().then(render);
  update({ code, canRejoin: false }, false);
  store(LAST_KEY, code);
  const saved = savedSeat(code);
  if (saved && saved.token && saved.left && !watch) {
    await openLeftRoom(code, saved);
    return;
  }
  if (saved && saved.token && !watch) {
    update({ token: saved.token, seat: saved.seat, spectator: false }, false);
    setUrl(code);
    connect();
    return;
  }
  if (watch) {
    update({ token: null, seat: null, spectator: true }, false);
    setUrl(code, { watch: '1' });
    connect();
    return;
  }
  try {
    update({ room: await app.api.room(code), screen: Screen.JOIN }, false);
  } catch (err) {
    update({ screen: Screen.GONE, goneReason: goneReason(err) }, false);
  }
  setUrl(code);
  render();
}

// A seat left mid-game: offer it back while the game lasts, else forget it.
async function openLeftRoom(code, saved) {
  update({ token: null, spectator: false }, false);
  let room;
  try {
    room = await app.api.room(code);
  } catch (err) {
    update({ screen: Screen.GONE, goneReason: goneReason(err) }, false);
    setUrl(code);
    render();
    return;
  }
  const seat = (room.seats || []).find((x) => x.seat === saved.seat);
  const canRejoin = room.status === 'playing' && !!seat && !!seat.left;
  // The game ended (or the seat is gone): nothing to take back.
  if (!canRejoin) keepSeat(code, null);
  update({ room, canRejoin, screen: Screen.JOIN }, false);
  setUrl(code);
  render();
}

function connect() {
  if (conn) conn.close();
  const screen = state.room && state.room.status === 'lobby' ? Screen.LOBBY
    : state.screen === Screen.HOME ? Screen.CONNECTING : state.screen;
  update({ msg: null, seq: null, screen }, false);
  conn = new Connection(app.api.wsUrl(state.code, state.token), {
    onMessage,
    onStatus: (status, attempt) => {
      // Back after a drop: the server may have been restarted with a newer client.
      if (status === 'open' && state.connStatus === 'retrying') checkServer();
      update({ connStatus: status, connAttempt: attempt }, false);
      renderStatus(state);
    },
    shouldRetry: async () => {
      try {
        await app.api.room(state.code);
        return true;
      } catch (err) {
        return goneReason(err) !== 'notFound';
      }
    },
    onGiveUp: () => update({ screen: Screen.GONE, goneReason: 'notFound' }),
  });
  render();
}

function goHome() {
  if (conn) conn.close();
  conn = null;
  store(LAST_KEY, null);
  update({ code: null, token: null, seat: null, spectator: false, room: null, msg: null, screen: Screen.HOME,
    connStatus: 'idle', canRejoin: false, confirmLeave: false, saved: null });
  setUrl(null);
}

// ---- messages --------------------------------------------------------------------------------------

// What a message asks beyond the state, by type (the reducer has applied it already).
const EFFECTS = {
  state(msg, before) {
    const { note } = state.timeouts;
    if (note && note !== before.timeouts.note) setTimeout(render, NOTE_MS + 50);
    // Names come from the room; fetch it when the table has seats we cannot name yet.
    const players = (msg.view && msg.view.players) || [];
    const { room } = state;
    if (!room || !room.seats || room.seats.length < players.length || room.status === 'lobby') refreshRoom();
  },
  error(msg) {
    const retry = onStale;
    onStale = null;
    if (msg.code === 'stale' && retry) { retry(); return; }
    showToast(errorText(msg.code, msg.message), 'error');
  },
  // Rather than reconnect and push another tab out in turn.
  replaced() {
    if (conn) conn.close();
    showToast(t('status.replaced'), 'error');
  },
  left() {
    showToast(t('status.left'), 'error');
    const { code } = state;
    goHome();
    openRoom(code);
  },
  reaction(msg) { talk.onReaction(msg); },
};

function onMessage(msg) {
  // The stored seat is read afresh: another tab of this browser may have changed it.
  const before = { ...state, saved: savedSeat(state.code) };
  state = reduce(before, msg, Date.now());
  if (state.saved !== before.saved) keepSeat(state.code, state.saved);
  if (state !== before || msg.type === 'error') render();
  const effect = Object.hasOwn(EFFECTS, msg.type) ? EFFECTS[msg.type] : null;
  if (effect) effect(msg, before);
}

let roomFetch = null;
function refreshRoom() {
  if (roomFetch || !state.code) return;
  roomFetch = app.api.room(state.code).then((room) => update({ room }))
    .catch(() => {}).finally(() => { roomFetch = null; });
}

// `onStale`: the caller sends the action again by itself when the game moved on under it (a
// Conspiranoicos row goes down while the opponent places theirs): the refusal is then its business,
// not a "Too late" for the player, whose row is placed all the same.
let onStale = null;
function act(action, { onStale: retry = null } = {}) {
  if (state.busy || !conn) return;
  if (!conn.act(action, state.seq)) {
    showToast(t('status.offline'), 'error');
    return;
  }
  onStale = retry;
  update({ busy: true });
}

function send(obj) {
  if (!conn || !conn.send(obj)) showToast(t('status.offline'), 'error');
}

// A host's call (or any seat's HTTP call): fn(api, token); a refusal shows as a toast.
async function hostCall(fn) {
  try {
    await fn(app.api, state.token);
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
}

// ---- seats: create, join, leave, take back ------------------------------------------------------------

async function createRoom(game, name, { options, settings }) {
  store(NAME_KEY, name);
  try {
    const res = await app.api.createRoom({ game, name, options, settings });
    keepSeat(res.code, { token: res.token, seat: res.seat, name });
    update({ room: null }, false);
    await openRoom(res.code);
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
}

// Learn to play (js/coach.js): a practice room (private, unwatched, untimed; the server deals its
// practice deal), its other seats given to bots, started at once. A failure leaves the player in
// its lobby, where the host's controls are.
const PRACTICE_BOTS = Object.freeze({ capitol: ['easy'], conspiranoicos: ['easy'] });

async function startPractice(game, name) {
  store(NAME_KEY, name);
  try {
    const res = await app.api.createRoom({ game, name, practice: true });
    keepSeat(res.code, { token: res.token, seat: res.seat, name });
    for (const level of PRACTICE_BOTS[game] || ['easy']) await app.api.addBots(res.code, res.token, 1, level);
    await app.api.start(res.code, res.token);
    update({ room: null }, false);
    await openRoom(res.code);
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
}

async function joinRoom(code, name) {
  store(NAME_KEY, name);
  const saved = savedSeat(code);
  if (saved && saved.token) { await openRoom(code); return; }
  try {
    const res = await app.api.join(code, name);
    // A name someone at the table (or of its standings) has is told apart: say so.
    const seated = res.name || name;
    // Kept with the seat: the lobby says it for as long as they sit there (a toast is easily missed).
    keepSeat(code, { token: res.token, seat: res.seat, name: seated, ...(res.renamed ? { renamed: true } : {}) });
    if (res.renamed) showToast(t('join.renamed', { name: seated }));
    await openRoom(code);
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
}

async function leaveRoom() {
  const { code, token } = state;
  keepSeat(code, null);
  // Close the socket before telling the server, so its notice that the seat left is not read as a kick.
  goHome();
  if (token) {
    try { await app.api.leave(code, token); } catch { /* the seat is dropped from this browser anyway */ }
  }
}

// Mid-game: a bot plays the seat; this browser keeps the token, marked `left`, to take it back.
async function leaveGame() {
  const { code, token, seat } = state;
  keepSeat(code, { ...(savedSeat(code) || {}), token, seat, left: true });
  update({ confirmLeave: false }, false);
  if (conn) conn.close();
  conn = null;
  try {
    await app.api.leave(code, token);
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
  await openRoom(code);
}

async function rejoinSeat() {
  const { code } = state;
  const saved = savedSeat(code);
  if (!saved || !saved.token) return;
  try {
    const res = await app.api.rejoin(code, saved.token);
    const { left, ...kept } = saved;
    keepSeat(code, { ...kept, seat: res.seat });
    update({ canRejoin: false, room: res.room, screen: Screen.CONNECTING }, false);
    await openRoom(code);
  } catch (err) {
    // The game ended meanwhile, or the seat was given away for good: forget it.
    if (err instanceof ApiError && (err.status === 401 || err.status === 409)) {
      keepSeat(code, null);
      update({ canRejoin: false }, false);
      await openRoom(code);
    }
    showToast(errorText(err.code, err.message), 'error');
  }
}

// A standing room's standings (js/standings.js): lobby, join and end screens.
function standingsFor() {
  return standingsPanel({
    api: app.api, code: state.code, room: state.room, token: state.spectator ? null : state.token,
    host: isHost(state), base: app.base,
    onToast: showToast,
    onClaimed: (res) => {
      keepSeat(state.code, { token: res.token, seat: res.seat, name: res.name });
      openRoom(state.code);
    },
  });
}

// ---- rendering -------------------------------------------------------------------------------------

let headerKey = null;

// Draws the header and the current screen (the only one built), keeping the focused control and
// what is being typed in it across the redraw.
function render() {
  const root = document.getElementById('app');
  const active = document.activeElement;
  const focusKey = active && active.dataset ? active.dataset.k : null;
  const typing = active && active.tagName === 'INPUT' && active.type !== 'checkbox' && active.type !== 'radio'
    ? { value: active.value } : null;
  document.body.dataset.screen = state.screen;
  // The header changes with the room, its game and the language only: kept otherwise.
  const top = `${state.code || ''}|${(state.room && state.room.game) || ''}|${lang()}`;
  if (top !== headerKey || !root.querySelector(':scope > header')) {
    headerKey = top;
    clear(root);
    root.appendChild(header(app));
    // The page's own words outside #app (index.html says them in English until now).
    const skip = document.querySelector('a.skip');
    if (skip) skip.textContent = t('common.skip');
    const rules = document.getElementById('rules');
    if (rules) rules.setAttribute('aria-label', t('common.rules'));
  }
  const old = root.querySelector(':scope > main');
  if (old) old.remove();
  root.appendChild(h('main', { id: 'main', class: `screen-${state.screen}` }, SCREENS[state.screen](app)));
  if (state.screen === Screen.TABLE) table.markTimeouts(app);
  // What moved since the last view (js/motion.js): after the table is drawn, never before.
  motion.after(state.screen === Screen.TABLE ? table.context(app) : null, state.code);
  renderStatus(state);
  renderToast();
  tick();
  if (state.screen !== Screen.TABLE) document.title = 'Conflictology';
  keys.decorate();
  // Beside the call (talk.js, cues.js, pip.js): reactions on their seats, cues, the mini-table.
  document.body.dataset.you = state.spectator || state.seat === null ? '' : String(state.seat);
  if (state.screen !== Screen.TABLE) cues.update(null);
  talk.decorate();
  pip.refresh();
  reportScreen();
  if (focusKey) {
    const el = root.querySelector(`[data-k="${CSS.escape(focusKey)}"]`);
    if (el) {
      if (typing && el.tagName === 'INPUT') el.value = typing.value;
      el.focus();
    }
  }
}

// Inside the extension, tell the service worker which screen the popup shows (it has no tab of its own).
let reported = '';
function reportScreen() {
  if (!IN_EXTENSION || !globalThis.chrome || !chrome.runtime || !chrome.runtime.sendMessage) return;
  const key = `${state.screen}:${state.code || ''}`;
  if (key === reported) return;
  reported = key;
  chrome.runtime.sendMessage({ type: 'screen', screen: state.screen, code: state.code, popup: document.body.classList.contains('popup') })
    .catch(() => {});
}

// ---- boot ------------------------------------------------------------------------------------------

// What the server offers (its games, options, bots, settings): the forms need it before they are drawn.
// A server with another client than this page's has the page reload (js/install.js).
async function loadInfo() {
  try {
    const got = await app.api.request('GET', '/api/info');
    if (install.reloadIfStale(got.client_version)) return;
    info.setInfo(got);
    talk.setReactions(info.reactions());
  } catch { /* the server cannot be reached: the home screen says so, and a room when it is opened */ }
}

// Asked again when the network or the socket comes back and when the app is shown again: the
// server may have been updated meanwhile, and an app opened offline gets its games.
const CHECK_MS = 3000;
// The first screen waits this long at most for the server (a link that drops every packet).
const INFO_WAIT_MS = 4000;
let lastCheck = 0;
function checkServer() {
  if (Date.now() - lastCheck < CHECK_MS) return;
  lastCheck = Date.now();
  const had = info.loaded();
  loadInfo().then(() => { if (!had && info.loaded()) render(); });
}

async function boot() {
  document.documentElement.lang = langTag();
  if (IN_EXTENSION) {
    document.body.classList.add('extension');
    // The side panel (sidepanel.html) is the extension's main surface; popup.html its fallback.
    if (location.pathname.endsWith('/sidepanel.html')) document.body.classList.add('sidepanel');
    else if (!new URLSearchParams(location.search).get('tab')) document.body.classList.add('popup');
  }
  app.base = await serverBase();
  app.api = new Api(app.base);
  const infoLoaded = loadInfo();
  install.registerWorker();
  setInterval(tick, 250);
  keys.install();
  window.addEventListener('offline', () => {
    if (conn) conn.drop();
  });
  window.addEventListener('online', () => {
    if (conn) conn.nudge();
    checkServer();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.hidden) return;
    if (conn) conn.nudge();
    checkServer();
  });
  const params = new URLSearchParams(location.search);
  // Join links are /?room=CODE; the server also serves this page at /r/CODE.
  const path = /^\/r\/([A-Za-z0-9]+)\/?$/.exec(location.pathname);
  let code = home.normalizeCode(params.get('room') || (path && path[1]));
  if (!code && IN_EXTENSION) {
    const last = load(LAST_KEY);
    if (last && savedSeat(last)) code = last;
  }
  await Promise.race([infoLoaded, new Promise((resolve) => { setTimeout(resolve, INFO_WAIT_MS); })]);
  if (!info.loaded()) infoLoaded.then(() => { if (info.loaded()) render(); });
  if (code) await openRoom(code, { watch: params.get('watch') === '1' });
  else render();
}

boot();
