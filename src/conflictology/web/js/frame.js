// What surrounds every screen: the header (brand, room code, connection, rules, language), the toast,
// the rules sheet, the countdowns' ticking and the words for an error code.
import { IN_EXTENSION } from './config.js';
import { clear, h, svg } from './dom.js';
import { gameNames, loaded } from './info.js';
import { t } from './i18n.js';
import { languageMenu } from './langmenu.js';
import { rulesSheet } from './rules.js';
import * as cues from './cues.js';
import * as pip from './pip.js';

export function header(app) {
  const { state } = app;
  const game = (state.room && state.room.game) || null;
  return h('header', { class: 'top' },
    h('button', { type: 'button', class: 'brand', onclick: app.goHome, 'aria-label': t('a11y.brand'), 'data-k': 'brand' },
      svg('<svg viewBox="0 0 32 32" width="26" height="26" aria-hidden="true"><rect x="3" y="5" width="17" height="23" rx="3" fill="#c9a227" transform="rotate(-10 11 16)"/><rect x="12" y="4" width="17" height="23" rx="3" fill="#e05d44" transform="rotate(8 20 16)"/></svg>'),
      h('span', null, 'Conflictology')),
    state.code ? h('span', { class: 'room-code', title: t('lobby.code') }, state.code) : null,
    h('span', { id: 'conn', class: 'conn', role: 'status', 'aria-live': 'polite' }),
    h('span', { class: 'spacer' }),
    IN_EXTENSION && (document.body.classList.contains('popup') || document.body.classList.contains('sidepanel'))
      ? h('button', { type: 'button', class: 'ghost icon-btn', 'data-k': 'open-tab', onclick: () => openInTab(state.code),
        title: t('ext.openTab'), 'aria-label': t('ext.openTab') }, '⤢') : null,
    IN_EXTENSION && globalThis.chrome && chrome.runtime && chrome.runtime.openOptionsPage
      ? h('button', { type: 'button', class: 'ghost icon-btn', 'data-k': 'ext-options', onclick: () => chrome.runtime.openOptionsPage(),
        title: t('ext.options'), 'aria-label': t('ext.options') }, '⚙') : null,
    h('button', { type: 'button', class: 'ghost', 'data-k': 'rules', onclick: () => openRules(app, game) }, t('common.rules')),
    languageMenu(() => app.render()));
}

function openInTab(code) {
  const url = new URL(location.href);
  url.searchParams.set('tab', '1');
  if (code) url.searchParams.set('room', code);
  if (globalThis.chrome && chrome.tabs && chrome.tabs.create) chrome.tabs.create({ url: url.toString() });
  else window.open(url.toString(), '_blank');
}

export function renderStatus(state) {
  const el = document.getElementById('conn');
  if (!el) return;
  const status = state.code ? state.connStatus : 'idle';
  el.className = `conn ${status}`;
  el.textContent = status === 'open' ? (state.spectator ? t('status.watching') : t('status.online'))
    : status === 'retrying' ? t('status.reconnecting')
      : status === 'connecting' ? t('status.connecting')
        : status === 'replaced' ? t('status.replacedShort') : '';
}

// ---- toasts ----------------------------------------------------------------------------------------

let toast = null;
let toastTimer = null;

export function showToast(text, kind = 'info') {
  toast = { text, kind };
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { toast = null; renderToast(); }, kind === 'error' ? 6000 : 2500);
  renderToast();
}

export function renderToast() {
  const el = document.getElementById('toast');
  clear(el);
  if (!toast) { el.hidden = true; return; }
  el.hidden = false;
  el.className = `toast ${toast.kind}`;
  el.appendChild(document.createTextNode(toast.text));
}

// An error's words in the reader's language when its code is known, else the server's message.
export function errorText(code, message) {
  const key = `errors.${code}`;
  const text = t(key);
  if (text !== key) return text;
  const talkKey = `talk.errors.${code}`;
  if (t(talkKey) !== talkKey) return t(talkKey);
  return message || code || t('errors.unknown');
}

export async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    showToast(t('lobby.copied', { what }));
  } catch {
    showToast(text);
  }
}

// ---- countdowns --------------------------------------------------------------------------------------

export function countdown(deadline, mine) {
  return h('span', { class: ['countdown', !mine && 'theirs'], 'data-deadline': String(deadline), role: 'timer', 'aria-label': t('common.timeLeft') },
    h('span', { class: 'countdown-bar' }, h('span', { class: 'countdown-fill' })),
    h('span', { class: 'countdown-num' }, ''));
}

// Updates every countdown on the page (and the mini-table's) from its deadline (epoch seconds).
export function tick() {
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

export function openRules(app, game) {
  const dialog = document.getElementById('rules');
  clear(dialog);
  // The same dialog shows the language menu (langmenu.js): say which it is now.
  dialog.setAttribute('aria-label', t('common.rules'));
  delete dialog.dataset.testid;
  // Offline (nothing from the server yet) the rules of every game this client can draw.
  const offered = loaded() ? gameNames(app.tables) : Object.keys(app.tables);
  const chosen = game || app.state.rulesGame || offered[0];
  dialog.appendChild(h('div', { class: 'rules-head' },
    h('div', { class: 'tabs', role: 'tablist' }, offered.map((g) => h('button', {
      type: 'button', role: 'tab', 'aria-selected': String(g === chosen), class: g === chosen ? 'on' : '',
      onclick: () => { app.update({ rulesGame: g }, false); dialog.close(); openRules(app, g); } }, t(`games.${g}.name`)))),
    h('button', { type: 'button', class: 'ghost', 'aria-label': t('common.close'), onclick: () => dialog.close() }, '✕')));
  dialog.appendChild(rulesSheet(chosen));
  dialog.showModal();
}
