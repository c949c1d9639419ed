// "You are wanted": how a player who looks at the video call learns a decision of theirs is pending
// (docs/web.md "Beside the call"). A short sound synthesised with Web Audio (no files) on their turn,
// on a threat against them and when their clock nears zero, with a mute switch that is remembered;
// a vibration on phones; the tab's title and icon; and inside the extension the toolbar badge and,
// when the player turned them on, one system notification per decision.
import { h } from './dom.js';
import { t } from './i18n.js';
import { IN_EXTENSION } from './config.js';

const MUTE_KEY = 'conflictology:muted';
const NOTIFY_KEY = 'conflictology:notify';
const NEAR_ZERO = 5; // seconds left when the clock cue sounds (once per decision)

function saved(key) { try { return localStorage.getItem(key) === '1'; } catch { return false; } }
function keep(key, on) { try { localStorage.setItem(key, on ? '1' : '0'); } catch { /* private mode */ } }

let muted = saved(MUTE_KEY);
let notify = saved(NOTIFY_KEY);
let current = { pending: false, key: '', deadline: null, paused: false };
let warned = '';   // the decision whose near-zero cue has sounded
let badgeText = null;

// ---- sound -------------------------------------------------------------------------------------------

let audio = null;
function context() {
  const Ctx = globalThis.AudioContext || globalThis.webkitAudioContext;
  if (!Ctx) return null;
  if (!audio) audio = new Ctx();
  return audio;
}
// Browsers start audio only after a gesture: the first click or key on the page unlocks it.
for (const ev of ['pointerdown', 'keydown']) {
  addEventListener(ev, () => { const ctx = context(); if (ctx && ctx.state === 'suspended') ctx.resume().catch(() => {}); }, { capture: true, passive: true });
}

// Each cue: notes as [frequency Hz, start s, length s], and a waveform. Short and soft.
const SOUNDS = {
  turn: { wave: 'sine', notes: [[660, 0, 0.12], [880, 0.13, 0.18]] },
  threat: { wave: 'triangle', notes: [[392, 0, 0.14], [294, 0.15, 0.25]] },
  clock: { wave: 'square', notes: [[1046, 0, 0.05], [1046, 0.12, 0.05]] },
};
const VIBRATION = { turn: [120], threat: [80, 60, 160], clock: [40, 60, 40] };

function play(kind) {
  // What sounded last is written on the page (tests and curious players read it there).
  const n = Number(document.documentElement.dataset.cues || 0) + 1;
  document.documentElement.dataset.cues = String(n);
  document.documentElement.dataset.cue = kind;
  if (muted) return;
  // Like sound, vibration is allowed only once the page has been touched (else Chrome refuses it).
  const touched = !navigator.userActivation || navigator.userActivation.hasBeenActive;
  if (!touched) return;
  if (navigator.vibrate) { try { navigator.vibrate(VIBRATION[kind]); } catch { /* not allowed */ } }
  const ctx = context();
  if (!ctx || ctx.state !== 'running') return;
  const sound = SOUNDS[kind];
  const t0 = ctx.currentTime + 0.01;
  for (const [freq, start, length] of sound.notes) {
    const osc = ctx.createOscillator();
    const gain = ctx.createGain();
    osc.type = sound.wave;
    osc.frequency.value = freq;
    gain.gain.setValueAtTime(0.0001, t0 + start);
    gain.gain.exponentialRampToValueAtTime(0.18, t0 + start + 0.015);
    gain.gain.exponentialRampToValueAtTime(0.0001, t0 + start + length);
    osc.connect(gain).connect(ctx.destination);
    osc.start(t0 + start);
    osc.stop(t0 + start + length + 0.02);
  }
}

// ---- the toolbar badge (extension) -------------------------------------------------------------------

// The service worker keeps the badge: each client page reports over a port, and a page that closes
// takes its report with it (background.js).
let port = null;
function report(text) {
  if (!IN_EXTENSION || !globalThis.chrome || !chrome.runtime || !chrome.runtime.connect) return;
  if (text === badgeText) return;
  badgeText = text;
  try {
    if (!port) {
      port = chrome.runtime.connect({ name: 'client' });
      port.onDisconnect.addListener(() => { port = null; badgeText = null; });
    }
    port.postMessage({ type: 'badge', text });
  } catch { port = null; }
}

function badgeFor(now) {
  if (!current.pending) return '';
  if (current.deadline && !current.paused) return String(Math.max(0, Math.ceil(current.deadline - now)));
  return '!';
}

// ---- notifications (extension, off by default) -----------------------------------------------------

function away() { return document.hidden || !document.hasFocus(); }

function maybeNotify(info) {
  if (!notify || !IN_EXTENSION || !globalThis.chrome || !chrome.notifications) return;
  if (!away()) return;
  chrome.notifications.create(`decision-${Date.now()}`, {
    type: 'basic', iconUrl: chrome.runtime.getURL('icons/icon128.png'), title: t('cues.notifyTitle'),
    message: info.text || t('common.yourMove'), priority: 2,
  }).catch((err) => console.warn('notification refused:', String(err)));
}

// ---- the tab's icon ------------------------------------------------------------------------------------

const DOT_ICON = 'data:image/svg+xml,' + encodeURIComponent('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect x="3" y="5" width="17" height="23" rx="3" fill="#c9a227" transform="rotate(-10 11 16)"/><rect x="12" y="4" width="17" height="23" rx="3" fill="#e05d44" transform="rotate(8 20 16)"/><circle cx="24" cy="8" r="7.5" fill="#ff3b30" stroke="#fff" stroke-width="2"/></svg>');
function favicon(pending) {
  const link = document.querySelector('link[rel="icon"]');
  if (!link) return;
  if (!link.dataset.plain) link.dataset.plain = link.getAttribute('href') || '/icon.svg';
  const want = pending ? DOT_ICON : link.dataset.plain;
  if (link.getAttribute('href') !== want) link.setAttribute('href', want);
}

// ---- what the page tells this module -------------------------------------------------------------------

// After every render: info = {pending, key (what the decision is), kind ('turn'…), tone ('threat'…),
// deadline, paused, text}. A new decision sounds once and is notified once (the same decision goes on
// while its key stays; a state with nothing pending ends it); an answered one clears the badge.
export function update(info) {
  const next = info && info.pending ? info : { pending: false, key: '', deadline: null, paused: false };
  const fresh = next.pending && next.key !== current.key;
  current = next;
  if (!next.pending) warned = '';
  if (fresh) {
    // Decisions met so far, written on the page like the cues (tests count notifications by them).
    document.documentElement.dataset.decisions = String(Number(document.documentElement.dataset.decisions || 0) + 1);
    if (next.tone === 'threat') play('threat');
    else if (next.kind === 'turn') play('turn');
    maybeNotify(next);
  }
  favicon(next.pending);
  report(badgeFor(Date.now() / 1000));
}

// Every quarter second: the clock cue, and the seconds on the badge.
export function tick() {
  const now = Date.now() / 1000;
  if (current.pending && current.deadline && !current.paused && warned !== current.key) {
    const left = current.deadline - now;
    if (left > 0 && left <= NEAR_ZERO) {
      warned = current.key;
      play('clock');
    }
  }
  report(badgeFor(now));
}

// ---- switches ---------------------------------------------------------------------------------------

export function muteButton(rerender) {
  return h('button', { type: 'button', class: 'ghost small icon-btn', 'data-k': 'mute', 'aria-pressed': String(muted),
    title: t(muted ? 'cues.unmute' : 'cues.mute'), 'aria-label': t(muted ? 'cues.unmute' : 'cues.mute'),
    onclick: () => { muted = !muted; keep(MUTE_KEY, muted); if (!muted) play('turn'); rerender(); } }, muted ? '🔇' : '🔔');
}

export function notifyToggle(rerender) {
  if (!IN_EXTENSION || !globalThis.chrome || !chrome.notifications) return null;
  return h('label', { class: 'check small notify-toggle' },
    h('input', { type: 'checkbox', checked: notify, 'data-k': 'notify',
      onchange: (ev) => { notify = ev.target.checked; keep(NOTIFY_KEY, notify); rerender(); } }),
    h('span', null, t('cues.notify')));
}
