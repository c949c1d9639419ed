// The Conflictology client: home (create / join), lobby, table, end screen; one page, no build step.
// The server is authoritative: this client renders what `state` messages say and sends `act`s.
import { Api, ApiError, Connection } from './api.js';
import { IN_EXTENSION, joinLink, serverBase } from './config.js';
import { clear, h, svg } from './dom.js';
import { BOT_LEVELS, GAMES, SETTINGS } from './games.js';
import { lang, LANGUAGES, setLang, t } from './i18n.js';
import * as capitol from './capitol.js';
import * as conspiranoicos from './conspiranoicos.js';
import { qrSvg } from './qr.js';
import { rulesSheet } from './rules.js';
import { standingsPanel } from './standings.js';
import * as talk from './talk.js';
import * as cues from './cues.js';
import * as pip from './pip.js';

const TABLES = { capitol, conspiranoicos };
const TOKEN_PREFIX = 'conflictology:room:';
const NAME_KEY = 'conflictology:name';

const S = {
  api: null,
  base: '',
  publicUrl: null,      // serve --public-url, when set (GET /api/info)
  screen: 'home',        // home | join | lobby | table | gone
  code: null,
  token: null,
  seat: null,
  spectator: false,
  room: null,            // the last lobby/GET room object
  msg: null,             // the last `state` message
  seq: null,
  conn: null,
  connStatus: 'idle',
  busy: false,
  ui: {},                // per-table UI state (selections), reset when the decision changes
  uiKey: '',
  toast: null,
  homeGame: 'capitol',
  announce: '',
};

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

function savedSeat(code) { return load(TOKEN_PREFIX + code); }

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

function normalizeCode(text) {
  return String(text || '').trim().toUpperCase().replace(/[^A-Z0-9]/g, '');
}

const LAST_KEY = 'conflictology:last';

async function openRoom(code, { watch = false } = {}) {
  S.code = code;
  // The toolbar popup closes at every click outside it: reopening it returns to this room.
  store(LAST_KEY, code);
  const saved = savedSeat(code);
  S.canRejoin = false;
  if (saved && saved.token && saved.left && !watch) {
    await openLeftRoom(code, saved);
    return;
  }
  if (saved && saved.token && !watch) {
    S.token = saved.token;
    S.seat = saved.seat;
    S.spectator = false;
    setUrl(code);
    connect();
    return;
  }
  if (watch) {
    S.token = null;
    S.seat = null;
    S.spectator = true;
    setUrl(code, { watch: '1' });
    connect();
    return;
  }
  try {
    S.room = await S.api.room(code);
    S.screen = 'join';
  } catch (err) {
    S.screen = 'gone';
    S.goneReason = err instanceof ApiError && err.status === 404 ? 'notFound' : 'network';
  }
  setUrl(code);
  render();
}

function connect() {
  if (S.conn) S.conn.close();
  S.msg = null;
  S.seq = null;
  S.screen = S.room && S.room.status === 'lobby' ? 'lobby' : S.screen === 'home' ? 'connecting' : S.screen;
  const url = S.api.wsUrl(S.code, S.token);
  S.conn = new Connection(url, {
    onMessage: onMessage,
    onStatus: (status, attempt) => {
      S.connStatus = status;
      S.connAttempt = attempt;
      renderStatus();
    },
    shouldRetry: async () => {
      try {
        await S.api.room(S.code);
        return true;
      } catch (err) {
        return !(err instanceof ApiError && err.status === 404);
      }
    },
    onGiveUp: () => {
      S.screen = 'gone';
      S.goneReason = 'notFound';
      render();
    },
  });
  render();
}

function goHome() {
  if (S.conn) S.conn.close();
  store(LAST_KEY, null);
  Object.assign(S, { conn: null, code: null, token: null, seat: null, spectator: false, room: null, msg: null,
    screen: 'home', connStatus: 'idle', canRejoin: false, confirmLeave: false });
  setUrl(null);
  render();
}

// ---- messages --------------------------------------------------------------------------------------

function onMessage(msg) {
  if (msg.type === 'lobby') {
    const wasPlaying = S.screen === 'table';
    S.room = msg.room;
    if (S.room.status === 'lobby') {
      S.screen = 'lobby';
      S.msg = null;
    } else if (!wasPlaying && !S.msg) {
      S.screen = 'connecting';
    }
    refreshSeat(msg.you);
    render();
  } else if (msg.type === 'state') {
    noteTimeouts(msg);
    S.msg = msg;
    S.seq = msg.seq;
    S.busy = false;
    S.screen = 'table';
    if (msg.room) S.room = msg.room;
    if (!S.spectator && msg.view && typeof msg.view.you === 'number' && msg.view.you !== S.seat) {
      S.seat = msg.view.you;
      const saved = savedSeat(S.code);
      if (saved) store(TOKEN_PREFIX + S.code, { ...saved, seat: S.seat });
    }
    const key = JSON.stringify(msg.legal || []);
    if (key !== S.uiKey) {
      S.uiKey = key;
      S.ui = {};
    }
    // Names come from the room; fetch it when the table has seats we cannot name yet.
    const players = (msg.view && msg.view.players) || [];
    if (!S.room || !S.room.seats || S.room.seats.length < players.length || S.room.status === 'lobby') refreshRoom();
    render();
  } else if (msg.type === 'error') {
    S.busy = false;
    showToast(errorText(msg.code, msg.message), 'error');
    render();
  } else if (msg.type === 'replaced') {
    // This seat was opened in more tabs than the server keeps: this, the oldest, stops here rather
    // than reconnect and push another tab out in turn.
    if (S.conn) S.conn.close();
    S.connStatus = 'replaced';
    showToast(t('status.replaced'), 'error');
    render();
  } else if (msg.type === 'left') {
    // Kicked by the host (or the seat was given up elsewhere): this browser no longer holds it,
    // unless it left the game itself (another tab did): then the token may still take it back.
    const saved = savedSeat(S.code);
    if (!(saved && saved.left)) store(TOKEN_PREFIX + S.code, null);
    showToast(t('status.left'), 'error');
    const code = S.code;
    goHome();
    openRoom(code);
  } else if (msg.type === 'reaction') {
    talk.onReaction(msg);
  } else if (msg.type === 'room' && msg.room) {
    S.room = msg.room;
    refreshSeat(msg.you);
    render();
  }
}

// Seats are renumbered when someone leaves the lobby. A lobby message says which seat is ours (`you`,
// docs/protocol.md); without it (a message that does not carry it, an older server) we follow our
// seat by the name we joined with. Once playing, the view's `you` settles it.
function refreshSeat(you) {
  if (!S.room || S.spectator) return;
  const saved = savedSeat(S.code);
  if (!saved) return;
  const seats = S.room.seats || [];
  let seat = saved.seat;
  if (typeof you === 'number') {
    seat = you;
  } else {
    const at = seats.find((x) => x.seat === saved.seat);
    if (!at || at.bot || at.name !== saved.name) {
      const byName = seats.find((x) => !x.bot && x.name === saved.name);
      if (byName) seat = byName.seat;
    }
  }
  S.seat = seat;
  if (seat !== saved.seat) store(TOKEN_PREFIX + S.code, { ...saved, seat });
}

let roomFetch = null;
function refreshRoom() {
  if (roomFetch || !S.code) return;
  roomFetch = S.api.room(S.code).then((room) => {
    S.room = room;
    render();
  }).catch(() => {}).finally(() => { roomFetch = null; });
}

function act(action) {
  if (S.busy || !S.conn) return;
  const sent = S.conn.send({ type: 'act', action, seq: S.seq });
  if (!sent) {
    showToast(t('status.offline'), 'error');
    return;
  }
  S.busy = true;
  render();
}

function errorText(code, message) {
  const key = `errors.${code}`;
  const text = t(key);
  if (text !== key) return text;
  const talkKey = `talk.errors.${code}`;
  if (t(talkKey) !== talkKey) return t(talkKey);
  return message || code || t('errors.unknown');
}

// ---- toasts, announcements --------------------------------------------------------------------------

let toastTimer = null;
function showToast(text, kind = 'info') {
  S.toast = { text, kind };
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { S.toast = null; renderToast(); }, kind === 'error' ? 6000 : 2500);
  renderToast();
}

function renderToast() {
  const el = document.getElementById('toast');
  clear(el);
  if (!S.toast) { el.hidden = true; return; }
  el.hidden = false;
  el.className = `toast ${S.toast.kind}`;
  el.appendChild(document.createTextNode(S.toast.text));
}

async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    showToast(t('lobby.copied', { what }));
  } catch {
    showToast(text);
  }
}

// ---- rendering -------------------------------------------------------------------------------------

function nameOf(seat) {
  const s = S.room && S.room.seats && S.room.seats.find((x) => x.seat === seat);
  if (s && s.name) return twinName(s, S.room.seats);
  return t('common.seat', { n: seat + 1 });
}

// Two names that look alike ("Ana" and a Cyrillic "Аna", a full-width "Ａna", a room saved before the
// server numbered twins) are told apart by their seat everywhere a name is shown (17.12).
const LOOKALIKE = { 'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't',
  'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'α': 'a', 'β': 'b', 'ε': 'e', 'ζ': 'z', 'η': 'n', 'ι': 'i', 'κ': 'k',
  'μ': 'm', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u', 'χ': 'x' };

function skeleton(name) {
  return String(name).normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
    .replace(/./gu, (ch) => LOOKALIKE[ch] || ch).replace(/\s+/g, ' ').trim();
}

function twinName(s, seats) {
  const key = skeleton(s.name);
  const twins = seats.filter((x) => x.name && skeleton(x.name) === key).length;
  return twins > 1 ? `${s.name} (${t('common.seat', { n: s.seat + 1 })})` : s.name;
}

function ctx() {
  const msg = S.msg || {};
  return {
    view: msg.view || {},
    legal: msg.legal || [],
    deadline: msg.deadline || null,
    you: S.spectator ? null : (msg.view && msg.view.you !== undefined ? msg.view.you : S.seat),
    room: S.room,
    name: nameOf,
    act,
    busy: S.busy,
    ui: S.ui,
    rerender: render,
    t,
    lang: lang(),
  };
}

function render() {
  const root = document.getElementById('app');
  const active = document.activeElement;
  const focusKey = active && active.dataset ? active.dataset.k : null;
  // A field being typed in keeps what was typed when a message re-renders the screen.
  const typing = active && active.tagName === 'INPUT' && active.type !== 'checkbox' && active.type !== 'radio'
    ? { value: active.value } : null;
  clear(root);
  document.body.dataset.screen = S.screen;
  root.appendChild(header());
  const main = h('main', { id: 'main', class: `screen-${S.screen}` });
  if (S.screen === 'home') main.appendChild(homeScreen());
  else if (S.screen === 'join') main.appendChild(joinScreen());
  else if (S.screen === 'lobby') main.appendChild(lobbyScreen());
  else if (S.screen === 'table') main.appendChild(tableScreen());
  else if (S.screen === 'gone') main.appendChild(goneScreen());
  else main.appendChild(h('div', { class: 'panel center' }, h('p', { class: 'muted' }, t('status.connecting'))));
  root.appendChild(main);
  if (S.screen === 'table') markTimeouts();
  renderStatus();
  renderToast();
  tick();
  if (S.screen !== 'table') document.title = 'Conflictology';
  // Beside the call (talk.js, cues.js, pip.js): reactions on their seats, cues, the mini-table.
  document.body.dataset.you = S.spectator || S.seat === null ? '' : String(S.seat);
  if (S.screen !== 'table') cues.update(null);
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
  const key = `${S.screen}:${S.code || ''}`;
  if (key === reported) return;
  reported = key;
  chrome.runtime.sendMessage({ type: 'screen', screen: S.screen, code: S.code, popup: document.body.classList.contains('popup') })
    .catch(() => {});
}

function header() {
  const langSwitch = h('div', { class: 'lang', role: 'group', 'aria-label': t('common.language') },
    Object.keys(LANGUAGES).map((code) => h('button', {
      type: 'button', class: code === lang() ? 'on' : '', 'aria-pressed': String(code === lang()), 'data-k': `lang-${code}`,
      lang: code, onclick: () => { setLang(code); render(); },
    }, LANGUAGES[code].meta.short)));
  const game = (S.room && S.room.game) || (S.screen === 'home' ? null : null);
  return h('header', { class: 'top' },
    h('button', { type: 'button', class: 'brand', onclick: goHome, 'aria-label': t('a11y.brand'), 'data-k': 'brand' },
      svg('<svg viewBox="0 0 32 32" width="26" height="26" aria-hidden="true"><rect x="3" y="5" width="17" height="23" rx="3" fill="#c9a227" transform="rotate(-10 11 16)"/><rect x="12" y="4" width="17" height="23" rx="3" fill="#e05d44" transform="rotate(8 20 16)"/></svg>'),
      h('span', null, 'Conflictology')),
    S.code ? h('span', { class: 'room-code', title: t('lobby.code') }, S.code) : null,
    h('span', { id: 'conn', class: 'conn', role: 'status', 'aria-live': 'polite' }),
    h('span', { class: 'spacer' }),
    IN_EXTENSION && (document.body.classList.contains('popup') || document.body.classList.contains('sidepanel'))
      ? h('button', { type: 'button', class: 'ghost icon-btn', 'data-k': 'open-tab', onclick: openInTab,
        title: t('ext.openTab'), 'aria-label': t('ext.openTab') }, '⤢') : null,
    IN_EXTENSION && globalThis.chrome && chrome.runtime && chrome.runtime.openOptionsPage
      ? h('button', { type: 'button', class: 'ghost icon-btn', 'data-k': 'ext-options', onclick: () => chrome.runtime.openOptionsPage(),
        title: t('ext.options'), 'aria-label': t('ext.options') }, '⚙') : null,
    h('button', { type: 'button', class: 'ghost', 'data-k': 'rules', onclick: () => openRules(game) }, t('common.rules')),
    langSwitch);
}

function openInTab() {
  const url = new URL(location.href);
  url.searchParams.set('tab', '1');
  if (S.code) url.searchParams.set('room', S.code);
  if (globalThis.chrome && chrome.tabs && chrome.tabs.create) chrome.tabs.create({ url: url.toString() });
  else window.open(url.toString(), '_blank');
}

function renderStatus() {
  const el = document.getElementById('conn');
  if (!el) return;
  const status = S.code ? S.connStatus : 'idle';
  el.className = `conn ${status}`;
  el.textContent = status === 'open' ? (S.spectator ? t('status.watching') : t('status.online'))
    : status === 'retrying' ? t('status.reconnecting')
      : status === 'connecting' ? t('status.connecting')
        : status === 'replaced' ? t('status.replacedShort') : '';
}

// ---- home ------------------------------------------------------------------------------------------

function homeScreen() {
  const savedName = load(NAME_KEY) || '';
  const gameChoice = h('div', { class: 'game-choice', role: 'radiogroup', 'aria-label': t('home.game') },
    Object.keys(GAMES).map((g) => h('label', { class: ['game-card', S.homeGame === g && 'on'] },
      h('input', { type: 'radio', name: 'game', value: g, checked: S.homeGame === g, 'data-k': `game-${g}`,
        onchange: () => { S.homeGame = g; render(); } }),
      h('span', { class: 'game-title' }, t(`games.${g}.name`)),
      h('span', { class: 'game-blurb' }, t(`games.${g}.blurb`)),
      h('span', { class: 'game-players' }, t(`games.${g}.players`)))));

  const optionInputs = optionsEditor(S.homeGame, null, true);
  const createForm = h('form', { class: 'panel create', 'aria-labelledby': 'create-h', onsubmit: onCreate },
    h('h2', { id: 'create-h' }, t('home.create')),
    gameChoice,
    h('label', { class: 'field' }, h('span', null, t('home.yourName')),
      h('input', { name: 'name', required: true, maxlength: 40, autocomplete: 'nickname', value: savedName, 'data-k': 'create-name' })),
    optionInputs ? h('details', { class: 'options' }, h('summary', null, t('home.options')), optionInputs) : null,
    h('button', { type: 'submit', class: 'primary', 'data-k': 'create' }, t('home.createButton')));

  const joinForm = h('form', { class: 'panel join', 'aria-labelledby': 'join-h', onsubmit: onJoinCode },
    h('h2', { id: 'join-h' }, t('home.join')),
    h('label', { class: 'field' }, h('span', null, t('home.code')),
      h('input', { name: 'code', required: true, maxlength: 12, autocomplete: 'off', autocapitalize: 'characters',
        class: 'code-input', spellcheck: 'false', 'data-k': 'join-code' })),
    h('label', { class: 'field' }, h('span', null, t('home.yourName')),
      h('input', { name: 'name', required: true, maxlength: 40, autocomplete: 'nickname', value: savedName, 'data-k': 'join-name' })),
    h('div', { class: 'row' },
      h('button', { type: 'submit', class: 'primary', 'data-k': 'join' }, t('home.joinButton')),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'watch', onclick: onWatchCode }, t('home.watch'))));

  return h('div', { class: 'home' },
    h('section', { class: 'hero' },
      h('h1', null, t('home.title')),
      h('p', null, t('home.tagline'))),
    h('div', { class: 'home-grid' }, createForm, joinForm));
}

function optionsEditor(game, room, isForm) {
  const spec = GAMES[game];
  if (!spec) return null;
  const current = (room && room.options) || {};
  const settings = (room && room.settings) || {};
  const items = [];
  for (const opt of spec.options) {
    const value = current[opt.key] !== undefined ? current[opt.key] : opt.default;
    if (opt.kind === 'bool') {
      items.push(h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: `opt.${opt.key}`, checked: !!value, 'data-k': `opt-${opt.key}`,
          onchange: isForm ? null : (ev) => patchOption(opt.key, ev.target.checked) }),
        h('span', null, t(`options.${opt.key}`))));
    } else if (opt.kind === 'set') {
      items.push(h('fieldset', { class: 'set' }, h('legend', null, t(`options.${opt.key}`)),
        opt.choices.map((c) => h('label', { class: 'check' },
          h('input', { type: 'checkbox', name: `opt.${opt.key}`, value: c, checked: value.includes(c), 'data-k': `opt-${opt.key}-${c}`,
            onchange: isForm ? null : (ev) => {
              const next = new Set(value);
              if (ev.target.checked) next.add(c); else next.delete(c);
              patchOption(opt.key, opt.choices.filter((x) => next.has(x)));
            } }),
          h('span', null, t(`capitol.roles.${c}`))))));
    }
  }
  for (const st of SETTINGS) {
    const value = settings[st.key] !== undefined && settings[st.key] !== null ? settings[st.key] : st.default;
    if (st.kind === 'bool') {
      items.push(h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: `set.${st.key}`, checked: !!value, 'data-k': `set-${st.key}`,
          onchange: isForm ? null : (ev) => patchSetting(st.key, ev.target.checked) }),
        h('span', null, t(`settings.${st.key}`))));
    } else {
      items.push(h('label', { class: 'field inline' }, h('span', null, t(`settings.${st.key}`)),
        h('input', { type: 'number', min: 1, max: st.max || 3600, step: 1, name: `set.${st.key}`, value: String(value), 'data-k': `set-${st.key}`,
          onchange: isForm ? null : (ev) => patchSetting(st.key, Number(ev.target.value)) })));
    }
  }
  return items.length ? h('div', { class: 'option-list' }, items) : null;
}

function readOptions(form, game) {
  const options = {};
  for (const opt of GAMES[game].options) {
    const inputs = [...form.querySelectorAll(`[name="opt.${opt.key}"]`)];
    if (opt.kind === 'bool') options[opt.key] = inputs[0].checked;
    else options[opt.key] = inputs.filter((i) => i.checked).map((i) => i.value);
  }
  const settings = {};
  for (const st of SETTINGS) {
    const input = form.querySelector(`[name="set.${st.key}"]`);
    if (!input) continue;
    settings[st.key] = st.kind === 'bool' ? input.checked : Number(input.value);
  }
  return { options, settings };
}

async function onCreate(ev) {
  ev.preventDefault();
  const form = ev.target;
  const name = form.elements.name.value.trim();
  if (!name) return;
  store(NAME_KEY, name);
  const game = S.homeGame;
  const { options, settings } = readOptions(form, game);
  try {
    const res = await S.api.createRoom({ game, name, options, settings });
    store(TOKEN_PREFIX + res.code, { token: res.token, seat: res.seat, name });
    S.room = null;
    await openRoom(res.code);
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
}

async function onJoinCode(ev) {
  ev.preventDefault();
  const form = ev.target;
  const code = normalizeCode(form.elements.code.value);
  const name = form.elements.name.value.trim();
  if (!code || !name) return;
  store(NAME_KEY, name);
  await joinRoom(code, name);
}

function onWatchCode(ev) {
  const form = ev.target.closest('form');
  const code = normalizeCode(form.elements.code.value);
  if (!code) { form.elements.code.focus(); return; }
  openRoom(code, { watch: true });
}

async function joinRoom(code, name) {
  const saved = savedSeat(code);
  if (saved && saved.token) { await openRoom(code); return; }
  try {
    const res = await S.api.join(code, name);
    store(TOKEN_PREFIX + code, { token: res.token, seat: res.seat, name });
    await openRoom(code);
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
}

// ---- join (a join link opened with no seat yet) ---------------------------------------------------------

function joinScreen() {
  if (S.canRejoin) return rejoinScreen();
  const room = S.room || {};
  const canJoin = room.status === 'lobby';
  const savedName = load(NAME_KEY) || '';
  return h('div', { class: 'panel join-room' },
    h('h2', null, t('join.title', { game: t(`games.${room.game}.name`) })),
    h('p', { class: 'code-big' }, S.code),
    seatList(room, false),
    canJoin
      ? h('form', { onsubmit: (ev) => { ev.preventDefault(); const n = ev.target.elements.name.value.trim(); if (n) { store(NAME_KEY, n); joinRoom(S.code, n); } } },
        h('label', { class: 'field' }, h('span', null, t('home.yourName')),
          h('input', { name: 'name', required: true, maxlength: 40, value: savedName, autocomplete: 'nickname', 'data-k': 'join-name' })),
        h('div', { class: 'row' },
          h('button', { type: 'submit', class: 'primary', 'data-k': 'join' }, t('home.joinButton')),
          h('button', { type: 'button', class: 'secondary', 'data-k': 'watch', onclick: () => openRoom(S.code, { watch: true }) }, t('home.watch'))))
      : h('div', null, h('p', { class: 'muted' }, t('join.started')),
        h('button', { type: 'button', class: 'primary', 'data-k': 'watch', onclick: () => openRoom(S.code, { watch: true }) }, t('home.watch'))),
    standingsFor());
}

function goneScreen() {
  return h('div', { class: 'panel center' },
    h('h2', null, t(S.goneReason === 'notFound' ? 'gone.notFound' : 'gone.network')),
    h('p', { class: 'muted' }, S.code || ''),
    h('button', { type: 'button', class: 'primary', onclick: goHome, 'data-k': 'home' }, t('common.home')));
}

// ---- lobby --------------------------------------------------------------------------------------------

function isHost() {
  if (!S.room || S.spectator) return false;
  const me = S.room.seats.find((s) => s.seat === S.seat);
  return !!(me && me.host);
}

function token() { return S.token; }

async function hostCall(fn) {
  try {
    await fn();
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
}

function patchOption(key, value) {
  hostCall(() => S.api.patchRoom(S.code, token(), { options: { ...(S.room.options || {}), [key]: value } }));
}

function patchSetting(key, value) {
  hostCall(() => S.api.patchRoom(S.code, token(), { settings: { [key]: value } }));
}

function seatList(room, host) {
  const seats = (room && room.seats) || [];
  return h('ul', { class: 'seats', 'aria-label': t('lobby.seats') },
    seats.map((s) => h('li', { class: ['seat', s.seat === S.seat && !S.spectator && 'me'] },
      h('span', { class: ['dot', s.connected || s.bot ? 'on' : 'off'], title: t(s.connected || s.bot ? 'lobby.connected' : 'lobby.disconnected') }),
      h('span', { class: 'seat-name' }, twinName(s, seats)),
      s.host ? h('span', { class: 'tag host' }, t('lobby.host')) : null,
      s.bot ? h('span', { class: 'tag bot' }, t('lobby.bot'), s.level ? ` · ${t(`levels.${s.level}`) === `levels.${s.level}` ? s.level : t(`levels.${s.level}`)}` : '') : null,
      s.seat === S.seat && !S.spectator ? h('span', { class: 'tag you' }, t('common.you')) : null,
      s.afk || s.left ? h('span', { class: 'tag away' }, t('common.away')) : null,
      host && s.seat !== S.seat ? h('button', { type: 'button', class: 'ghost small', 'data-k': `kick-${s.seat}`,
        'aria-label': t('lobby.kickName', { name: s.name }),
        onclick: () => hostCall(() => S.api.kick(S.code, token(), s.seat)) }, t('lobby.kick')) : null)));
}

function lobbyScreen() {
  const room = S.room;
  if (!room) return h('p', { class: 'muted' }, t('status.connecting'));
  const host = isHost();
  const spec = GAMES[room.game] || { min: 2, max: 6 };
  const count = room.seats.length;
  const link = joinLink(S.publicUrl || S.base, S.code);
  const share = h('section', { class: 'panel share', 'aria-labelledby': 'share-h' },
    h('h2', { id: 'share-h' }, t('lobby.invite')),
    h('p', { class: 'code-big', 'aria-label': t('lobby.codeIs', { code: S.code.split('').join(' ') }) }, S.code),
    h('div', { class: 'row' },
      h('button', { type: 'button', class: 'secondary', 'data-k': 'copy-code', onclick: () => copy(S.code, t('lobby.code')) }, t('lobby.copyCode')),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'copy-link', onclick: () => copy(link, t('lobby.link')) }, t('lobby.copyLink'))),
    h('div', { class: 'qr', role: 'img', 'aria-label': t('lobby.qr') }, qrSvg(link)),
    h('p', { class: 'link muted' }, link));

  const seatsPanel = h('section', { class: 'panel seats-panel', 'aria-labelledby': 'seats-h' },
    h('h2', { id: 'seats-h' }, t('lobby.players', { n: count, max: spec.max })),
    seatList(room, host),
    host && count < spec.max ? botAdder() : null,
    host
      ? h('button', { type: 'button', class: 'primary big', 'data-k': 'start', disabled: count < spec.min || count > spec.max,
        onclick: () => hostCall(() => S.api.start(S.code, token())) },
      count < spec.min ? t('lobby.needPlayers', { n: spec.min }) : t('lobby.start'))
      : h('p', { class: 'waiting' }, S.spectator ? t('lobby.watching') : t('lobby.waitHost')),
    !S.spectator ? h('button', { type: 'button', class: 'ghost', 'data-k': 'leave', onclick: leaveRoom }, t('lobby.leave')) : null);

  const options = optionsEditor(room.game, room, false);
  const optionsPanel = h('section', { class: 'panel options-panel', 'aria-labelledby': 'opt-h' },
    h('h2', { id: 'opt-h' }, t('lobby.options')),
    host ? gamePicker(room) : null,
    host && options ? options : optionSummary(room));

  return h('div', { class: 'lobby' },
    h('h1', { class: 'lobby-title' }, t(`games.${room.game}.name`)),
    h('div', { class: 'lobby-grid' }, seatsPanel, share, optionsPanel, standingsFor()));
}

// The host may switch the table to another game between games (a standing room's evening goes
// on with another game; PATCH {"game"}: the server refuses it if the seats do not fit).
function gamePicker(room) {
  return h('label', { class: 'field inline' }, h('span', null, t('lobby.game')),
    h('select', { 'data-k': 'game', onchange: (ev) => {
      const game = ev.target.value;
      hostCall(async () => {
        try {
          await S.api.patchRoom(S.code, token(), { game });
        } finally {
          render(); // a refused switch shows the room's game again
        }
      });
    } }, Object.keys(GAMES).map((g) => h('option', { value: g, selected: room.game === g }, t(`games.${g}.name`)))));
}

// A standing room's standings (js/standings.js): lobby, join and end screens.
function standingsFor() {
  return standingsPanel({
    api: S.api, code: S.code, room: S.room, token: S.spectator ? null : S.token, host: isHost(), base: S.base,
    onToast: showToast,
    onClaimed: (res) => {
      store(TOKEN_PREFIX + S.code, { token: res.token, seat: res.seat, name: res.name });
      openRoom(S.code);
    },
  });
}

function optionSummary(room) {
  const spec = GAMES[room.game];
  const lines = [];
  for (const opt of (spec ? spec.options : [])) {
    const v = room.options && room.options[opt.key] !== undefined ? room.options[opt.key] : opt.default;
    const shown = opt.kind === 'bool' ? t(v ? 'common.on' : 'common.off')
      : (v.length ? v.map((c) => t(`capitol.roles.${c}`)).join(', ') : t('common.none'));
    lines.push(h('li', null, h('span', null, t(`options.${opt.key}`)), h('strong', null, shown)));
  }
  const st = room.settings || {};
  if (st.timers === false) lines.push(h('li', null, h('span', null, t('settings.timers')), h('strong', null, t('common.off'))));
  else {
    for (const key of ['turn_seconds', 'response_seconds', 'choice_seconds']) {
      if (st[key]) lines.push(h('li', null, h('span', null, t(`settings.${key}`)), h('strong', null, `${st[key]} s`)));
    }
  }
  return h('ul', { class: 'option-summary' }, lines);
}

function botAdder() {
  // The levels, the game's named personalities (docs/bots.md) and a mystery bot, each described.
  const choices = [...BOT_LEVELS, ...((GAMES[S.room && S.room.game] || {}).bots || []), 'mystery'];
  const about = (lv) => t(`levels.about.${lv || 'default'}`);
  const select = h('select', { 'aria-label': t('lobby.botLevel'), 'data-k': 'bot-level' },
    choices.map((lv) => h('option', { value: lv, selected: S.botLevel === lv }, t(`levels.${lv || 'default'}`))));
  const line = h('p', { class: 'muted small bot-about', 'data-testid': 'bot-about' }, about(S.botLevel || ''));
  select.addEventListener('change', () => { S.botLevel = select.value; line.textContent = about(select.value); });
  return h('div', { class: 'row bot-adder' },
    select, line,
    h('button', { type: 'button', class: 'secondary', 'data-k': 'add-bot',
      onclick: () => hostCall(() => S.api.addBots(S.code, token(), 1, select.value || undefined)) }, t('lobby.addBot')));
}

async function leaveRoom() {
  const code = S.code;
  const seatToken = S.token;
  store(TOKEN_PREFIX + code, null);
  // Close the socket before telling the server, so its notice that the seat left is not read as a kick.
  goHome();
  if (seatToken) {
    try { await S.api.leave(code, seatToken); } catch { /* the seat is dropped from this browser anyway */ }
  }
}

// ---- leaving mid-game, and taking the seat back (issue 17.2) ------------------------------------------
// Leaving a game being played asks first; a bot plays the seat, and this browser keeps the token
// (marked `left`) so that it may take the seat back while the game lasts (POST …/rejoin).

function gameOn() {
  return !!(S.room && S.room.status === 'playing' && S.msg && !(S.msg.view && isOver(S.msg.view)));
}

function askLeave() {
  if (!gameOn()) { leaveRoom(); return; }
  S.confirmLeave = true;
  render();
  const stay = document.querySelector('[data-k=leave-stay]');
  if (stay) stay.focus();
}

function leaveConfirm() {
  const close = () => { S.confirmLeave = false; render(); };
  return h('div', { class: 'leave-confirm', role: 'alertdialog', 'aria-modal': 'false', 'aria-labelledby': 'leave-h',
    'aria-describedby': 'leave-p', 'data-testid': 'leave-confirm',
    onkeydown: (ev) => { if (ev.key === 'Escape') close(); } },
  h('h2', { id: 'leave-h' }, t('leaving.title')),
  h('p', { id: 'leave-p' }, t('leaving.body')),
  h('div', { class: 'row' },
    h('button', { type: 'button', class: 'danger', 'data-k': 'leave-yes', onclick: leaveGame }, t('leaving.yes')),
    h('button', { type: 'button', class: 'secondary', 'data-k': 'leave-stay', onclick: close }, t('leaving.stay'))));
}

async function leaveGame() {
  const code = S.code;
  const saved = savedSeat(code) || {};
  const seatToken = S.token;
  S.confirmLeave = false;
  store(TOKEN_PREFIX + code, { ...saved, token: seatToken, seat: S.seat, left: true });
  if (S.conn) S.conn.close();
  S.conn = null;
  try {
    await S.api.leave(code, seatToken);
  } catch (err) {
    showToast(errorText(err.code, err.message), 'error');
  }
  await openRoom(code);
}

async function openLeftRoom(code, saved) {
  S.token = null;
  S.spectator = false;
  try {
    S.room = await S.api.room(code);
  } catch (err) {
    S.screen = 'gone';
    S.goneReason = err instanceof ApiError && err.status === 404 ? 'notFound' : 'network';
    setUrl(code);
    render();
    return;
  }
  const seat = (S.room.seats || []).find((x) => x.seat === saved.seat);
  if (S.room.status === 'playing' && seat && seat.left) {
    S.canRejoin = true;
  } else {
    // The game ended (or the seat is gone): nothing to take back.
    store(TOKEN_PREFIX + code, null);
  }
  S.screen = 'join';
  setUrl(code);
  render();
}

function rejoinScreen() {
  const room = S.room || {};
  return h('div', { class: 'panel join-room', 'data-testid': 'rejoin' },
    h('h2', null, t('leaving.leftTitle', { game: t(`games.${room.game}.name`) })),
    h('p', { class: 'muted' }, t('leaving.leftBody')),
    h('div', { class: 'row' },
      h('button', { type: 'button', class: 'primary', 'data-k': 'rejoin', onclick: rejoinSeat }, t('leaving.rejoin')),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'watch', onclick: () => openRoom(S.code, { watch: true }) }, t('home.watch')),
      h('button', { type: 'button', class: 'ghost', 'data-k': 'home', onclick: goHome }, t('common.home'))));
}

async function rejoinSeat() {
  const code = S.code;
  const saved = savedSeat(code);
  if (!saved || !saved.token) return;
  try {
    const res = await S.api.rejoin(code, saved.token);
    const { left, ...kept } = saved;
    store(TOKEN_PREFIX + code, { ...kept, seat: res.seat });
    S.canRejoin = false;
    S.room = res.room;
    S.screen = 'connecting';
    await openRoom(code);
  } catch (err) {
    // The game ended meanwhile, or the seat was given away for good: forget it.
    if (err instanceof ApiError && (err.status === 401 || err.status === 409)) {
      store(TOKEN_PREFIX + code, null);
      S.canRejoin = false;
      await openRoom(code);
    }
    showToast(errorText(err.code, err.message), 'error');
  }
}

// ---- table ---------------------------------------------------------------------------------------------

function tableScreen() {
  const c = ctx();
  const game = c.view.game || (S.room && S.room.game);
  const mod = TABLES[game];
  if (!mod) return h('p', null, t('errors.unknown'));
  const banner = mod.banner(c);
  if (banner.text !== S.announce) {
    S.announce = banner.text;
    const live = document.getElementById('live');
    live.textContent = banner.text;
  }
  // A decision awaits: say so in the tab's title too (players keep the video call in front).
  document.title = c.legal.length ? `● ${t('common.yourMove')} · Conflictology` : 'Conflictology';
  const over = c.view.winners && c.view.winners.length > 0 && c.legal.length === 0 && isOver(c.view);
  cues.update(wanted(c, banner));
  return h('div', { class: ['table-wrap', `game-${game}`] },
    h('div', { class: ['banner', banner.tone], 'data-testid': 'banner' },
      h('span', { class: 'banner-text' }, banner.text),
      c.deadline ? countdown(c.deadline, c.legal.length > 0) : null,
      S.spectator ? h('span', { class: 'tag' }, t('status.spectator')) : null),
    timeoutNote(c),
    talk.talkBar(talkEnv(c)),
    over ? endPanel(c, mod) : null,
    mod.renderTable(c),
    h('div', { class: 'table-foot' },
      activeOptions(),
      h('div', { class: 'row' },
        !S.spectator ? h('button', { type: 'button', class: 'ghost', 'data-k': 'leave', onclick: askLeave }, t('lobby.leave')) : null)),
    S.confirmLeave ? leaveConfirm() : null);
}

// ---- clocks that ran out (issue 17.13) -------------------------------------------------------------------
// A state message lists the game's timeouts (docs/protocol.md): the state each made and the seat. A
// timeout new since the last state is said under the banner, and the log entry it made is marked, so
// that "Ben takes Income." does not read as Ben's choice.
const NOTE_MS = 10000;

function noteTimeouts(msg) {
  const log = (msg.view && msg.view.log) || [];
  const gameId = msg.room && msg.room.game_id;
  if (S.marksGame !== gameId) { S.marksGame = gameId; S.timeoutMarks = []; S.timeoutNote = null; }
  const fresh = S.seq === null || S.seq === undefined ? []
    : (msg.timeouts || []).filter((x) => x.seq > S.seq && x.seq <= msg.seq);
  if (fresh.length) {
    const seats = [...new Set(fresh.map((x) => x.seat))];
    S.timeoutMarks.push({ from: S.logLen || 0, to: log.length, seats });
    S.timeoutNote = { seats, until: Date.now() + NOTE_MS };
    setTimeout(() => render(), NOTE_MS + 50);
  }
  S.logLen = log.length;
}

function timeoutNote(c) {
  const note = S.timeoutNote;
  if (!note || Date.now() > note.until) return null;
  const mine = c.you !== null && note.seats.includes(c.you);
  const others = note.seats.filter((s) => s !== c.you).map((s) => c.name(s));
  const parts = [];
  if (mine) parts.push(t('clock.ranOutYou'));
  if (others.length) parts.push(t('clock.ranOut', { names: others.join(', ') }));
  return h('p', { class: 'timeout-note', role: 'status', 'data-testid': 'timeout-note' }, `⏱ ${parts.join(' ')}`);
}

// Marks the log entries a timeout made (the log shows its last 60 entries).
function markTimeouts() {
  const list = document.querySelector('.log-list');
  if (!list || !S.timeoutMarks || !S.timeoutMarks.length) return;
  const items = [...list.children];
  const offset = Math.max(0, (S.logLen || 0) - items.length);
  for (const mark of S.timeoutMarks) {
    const names = mark.seats.map((s) => nameOf(s));
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

function wanted(c, banner) {
  const msg = S.msg || {};
  const pause = msg.pause || null;
  if (!c.legal.length || S.spectator) return null;
  const kind = msg.timer || (pause && pause.timer) || (c.view.turn === c.you ? 'turn' : null);
  return { pending: true, key: `${S.code}|${JSON.stringify(c.legal)}`, kind, tone: banner.tone, text: banner.text,
    deadline: c.deadline, paused: !!pause };
}

function talkEnv(c) {
  return {
    msg: S.msg, you: c.you, spectator: S.spectator, host: isHost(), name: nameOf,
    send: (obj) => { if (!S.conn || !S.conn.send(obj)) showToast(t('status.offline'), 'error'); },
    post: (what) => hostCall(() => S.api.request('POST', `/api/rooms/${encodeURIComponent(S.code)}/${what}`, {}, token())),
    extras: [cues.muteButton(render), cues.notifyToggle(render), pip.pipButton(miniTable)],
  };
}

function miniTable() {
  if (S.screen !== 'table') return h('p', { class: 'muted' }, t('status.connecting'));
  const c = ctx();
  const game = c.view.game || (S.room && S.room.game);
  const mod = TABLES[game];
  if (!mod) return null;
  const banner = mod.banner(c);
  const pause = (S.msg && S.msg.pause) || null;
  return h('div', { class: ['mini-table', `game-${game}`] },
    h('div', { class: ['banner', banner.tone] },
      h('span', { class: 'banner-text' }, banner.text),
      pause ? h('span', { class: 'tag' }, pause.kind === 'hold' ? '✋' : '⏸') : null,
      c.deadline ? countdown(c.deadline, c.legal.length > 0) : null),
    mod.renderTable(c));
}

function isOver(view) {
  return view.over === true || (Array.isArray(view.winners) && view.winners.length > 0);
}

function activeOptions() {
  if (!S.room) return null;
  return h('details', { class: 'active-options' }, h('summary', null, t('lobby.options')), optionSummary(S.room));
}

function endPanel(c, mod) {
  const winners = c.view.winners || [];
  const youWon = c.you !== null && winners.includes(c.you);
  const names = winners.map((w) => (w === c.you ? t('common.you') : c.name(w)));
  const title = youWon ? (winners.length > 1 ? t('end.sharedYou') : t('end.youWin'))
    : t('end.winners', { names: names.join(' & ') });
  const host = isHost();
  return h('section', { class: ['panel', 'end', youWon && 'won'], 'aria-labelledby': 'end-h', 'data-testid': 'end' },
    h('h2', { id: 'end-h' }, title),
    mod.endDetail ? mod.endDetail(c) : null,
    standingsFor(),
    h('div', { class: 'row' },
      host ? h('button', { type: 'button', class: 'primary', 'data-k': 'rematch',
        onclick: () => hostCall(() => S.api.rematch(S.code, token())) }, t('end.rematch'))
        : (!S.spectator ? h('p', { class: 'muted' }, t('end.waitRematch')) : null),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'new-room', onclick: goHome }, t('end.newRoom')),
      replayLink()));
}

// The finished game's replay viewer (js/replay.js); the fragment tells it which stored seat to use.
function replayLink() {
  const id = S.room && S.room.game_id;
  if (!id) return null;
  return h('a', { class: 'button secondary', 'data-k': 'replay', target: '_blank', rel: 'noopener',
    href: `${S.base || ''}/replay/${encodeURIComponent(id)}#room=${encodeURIComponent(S.code || '')}` }, t('replay.open'));
}

function countdown(deadline, mine) {
  return h('span', { class: ['countdown', !mine && 'theirs'], 'data-deadline': String(deadline), role: 'timer', 'aria-label': t('common.timeLeft') },
    h('span', { class: 'countdown-bar' }, h('span', { class: 'countdown-fill' })),
    h('span', { class: 'countdown-num' }, ''));
}

// Updates every countdown on the page from its deadline (epoch seconds).
function tick() {
  const now = Date.now() / 1000;
  cues.tick();
  for (const el of [...document.querySelectorAll('[data-deadline]'), ...pip.deadlines()]) {
    const deadline = Number(el.dataset.deadline);
    if (!el.dataset.total) el.dataset.total = String(Math.max(1, deadline - now));
    const left = Math.max(0, deadline - now);
    const frac = Math.min(1, left / Number(el.dataset.total));
    const fill = el.querySelector('.countdown-fill');
    if (fill) fill.style.width = `${(frac * 100).toFixed(1)}%`;
    const num = el.querySelector('.countdown-num');
    if (num) num.textContent = `${Math.ceil(left)} s`;
    el.classList.toggle('urgent', left < 5);
  }
}

// ---- rules -----------------------------------------------------------------------------------------

function openRules(game) {
  const dialog = document.getElementById('rules');
  clear(dialog);
  const chosen = game || S.rulesGame || 'capitol';
  dialog.appendChild(h('div', { class: 'rules-head' },
    h('div', { class: 'tabs', role: 'tablist' }, Object.keys(GAMES).map((g) => h('button', {
      type: 'button', role: 'tab', 'aria-selected': String(g === chosen), class: g === chosen ? 'on' : '',
      onclick: () => { S.rulesGame = g; dialog.close(); openRules(g); } }, t(`games.${g}.name`)))),
    h('button', { type: 'button', class: 'ghost', 'aria-label': t('common.close'), onclick: () => dialog.close() }, '✕')));
  dialog.appendChild(rulesSheet(chosen));
  dialog.showModal();
}

// ---- boot ------------------------------------------------------------------------------------------

async function boot() {
  document.documentElement.lang = lang();
  if (IN_EXTENSION) {
    document.body.classList.add('extension');
    // The side panel (sidepanel.html) is the extension's main surface; popup.html its fallback.
    if (location.pathname.endsWith('/sidepanel.html')) document.body.classList.add('sidepanel');
    else if (!new URLSearchParams(location.search).get('tab')) document.body.classList.add('popup');
  }
  S.base = await serverBase();
  S.api = new Api(S.base);
  // A server behind a proxy may be reached here by another address than the one players open
  // (serve --public-url): share links and QR codes show that one.
  S.api.request('GET', '/api/info').then((info) => {
    if (info) talk.setReactions(info.reactions);
    if (info && info.public_url) { S.publicUrl = info.public_url; render(); }
  }).catch(() => {});
  setInterval(tick, 250);
  window.addEventListener('online', () => S.conn && S.conn.nudge());
  document.addEventListener('visibilitychange', () => { if (!document.hidden && S.conn) S.conn.nudge(); });
  const params = new URLSearchParams(location.search);
  // Join links are /?room=CODE; the server also serves this page at /r/CODE.
  const path = /^\/r\/([A-Za-z0-9]+)\/?$/.exec(location.pathname);
  let code = normalizeCode(params.get('room') || (path && path[1]));
  if (!code && IN_EXTENSION) {
    const last = load(LAST_KEY);
    if (last && savedSeat(last)) code = last;
  }
  if (code) await openRoom(code, { watch: params.get('watch') === '1' });
  else render();
}

boot();
