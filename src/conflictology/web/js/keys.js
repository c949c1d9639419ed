// Keyboard play on a desktop (issue 26): every decision on the table has a key, declared with
// `aria-keyshortcuts` and shown as a small cap in a corner of its button (on a device with a fine
// pointer and hover: beside.css); pressing it presses the button. It works from outside the game
// modules, from their buttons' `data-k` names alone (they stay stable while the table's layout
// changes), and is worked out again after every render (app.js calls `decorate`).
//
// A decision's key is, in this order: its word's letter in the reader's language (i18n `keys.*`:
// Income I, Ingreso I, Foreign Aid F, Ayuda Exterior A…), Enter for a confirmation, Escape for
// Cancel, or a digit for a card, a target, a slot or a pick, 1–9 then 0 in screen order (a Pyramid
// slot by its own number, a row's card by its place). A key another button shown at the same time
// already has (a second "Block as …") falls back to a free digit; past ten, a button keeps no key.
import { h } from './dom.js';
import { has, t } from './i18n.js';

const DIGITS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '0'];
const ENTER = 'enter';
const ESCAPE = 'escape';

// Capitol's `act-…` buttons whose letter is named after their action.
const LETTERED = new Set(['income', 'foreign_aid', 'scandal', 'banker', 'mafia', 'hacker', 'reporter',
  'police_investigate', 'police_swap', 'challenge', 'let_keep', 'force_redraw']);

// The key this button asks for (null: none of its own, it takes a free digit), or undefined when it
// is not a decision (the talk bar, leaving, the header…). `places` counts each numbered group's
// buttons in screen order, disabled ones too, so that "2" stays the second card whichever may be chosen.
function wanted(button, places) {
  const k = button.dataset.k || '';
  const place = (group) => {
    const n = (places.get(group) || 0) + 1;
    places.set(group, n);
    return digit(n);
  };
  let m;
  if (k === 'cancel') return ESCAPE;
  if (k === 'act-keep' || k === 'row-confirm') return ENTER;
  if (k === 'act-pass') return letter(passKey(button));
  if (k.startsWith('act-block-')) return letter('capitol.block');
  if ((m = /^act-(\w+)$/.exec(k))) return LETTERED.has(m[1]) ? letter(`capitol.${m[1]}`) : null;
  if ((m = /^send-(pyramid|zone)$/.exec(k))) return letter(`conspiranoicos.${m[1]}`);
  if ((m = /^card-(\d+)$/.exec(k))) return digit(Number(m[1]) + 1);
  if ((m = /^arr-(\d+)$/.exec(k))) return digit(Number(m[1]) + 1);
  if ((m = /^slot-(\d+)$/.exec(k))) return digit(Number(m[1]));
  if ((m = /^(target|hand|pick|unk)-/.exec(k))) return place(m[1]);
  return undefined;
}

// One data-k, three words: Capitol's "Let it pass" and "Accept the block", Conspiranoicos' "No swap".
function passKey(button) {
  const text = button.textContent.trim();
  if (text === t('capitol.actions.acceptBlock')) return 'capitol.acceptBlock';
  if (text === t('conspiranoicos.noSwap')) return 'conspiranoicos.noSwap';
  return 'capitol.pass';
}

function letter(name) {
  const key = `keys.${name}`;
  const value = has(key) ? String(t(key)) : '';
  return value.length === 1 ? value.toLowerCase() : null;
}

function digit(n) { return n >= 1 && n <= DIGITS.length ? DIGITS[n - 1] : null; }

// Only what a player could press now: enabled and drawn.
function usable(button) {
  if (button.disabled || button.closest('[inert], [aria-hidden="true"]')) return false;
  if (typeof button.checkVisibility === 'function') return button.checkVisibility({ visibilityProperty: true });
  return button.getClientRects().length > 0;
}

// The key as aria-keyshortcuts names it (UI Events key values) and as its cap shows it.
function ariaName(key) {
  if (key === ENTER) return 'Enter';
  if (key === ESCAPE) return 'Escape';
  return key.toUpperCase();
}

function capText(key) {
  if (key === ENTER) return t('keys.cap.enter');
  if (key === ESCAPE) return t('keys.cap.escape');
  return key.toUpperCase();
}

let shortcuts = new Map(); // key → button, as last drawn

// Gives every decision inside #main its key, afresh (a button keeps its key only while it is drawn).
export function decorate(root = document.getElementById('main')) {
  shortcuts = new Map();
  if (!root) return;
  const asked = [];
  const places = new Map();
  for (const button of root.querySelectorAll('button[data-k]')) {
    for (const old of button.querySelectorAll(':scope > kbd.key-cap')) old.remove();
    button.removeAttribute('aria-keyshortcuts');
    const want = wanted(button, places);
    if (want !== undefined && usable(button)) asked.push({ button, want });
  }
  // Each key once, the first button in screen order keeping it; the others take free digits.
  const late = [];
  for (const a of asked) {
    if (a.want && !shortcuts.has(a.want)) shortcuts.set(a.want, a.button);
    else late.push(a);
  }
  const free = DIGITS.filter((d) => !shortcuts.has(d));
  for (const a of late) {
    const d = free.shift();
    if (d) shortcuts.set(d, a.button);
  }
  for (const [key, button] of shortcuts) {
    button.setAttribute('aria-keyshortcuts', ariaName(key));
    button.appendChild(h('kbd', { class: 'key-cap', 'aria-hidden': 'true' }, capText(key)));
  }
}

function keyOf(ev) {
  if (ev.key === 'Enter') return ENTER;
  if (ev.key === 'Escape' || ev.key === 'Esc') return ESCAPE;
  return ev.key && ev.key.length === 1 ? ev.key.toLowerCase() : null;
}

const TYPING = 'input, select, textarea, [contenteditable]:not([contenteditable="false"])';
// Where Enter already presses what has the focus.
const ACTIVATES = 'button, a[href], summary, [role="button"], [role="link"], [role="menuitem"], [role="tab"]';

// Why a key is the page's, not a decision's: a shortcut of the browser's or the system's, a key
// held down, typing, the rules sheet or the leave prompt open, Enter on a focused control.
function notOurs(ev, key) {
  if (ev.defaultPrevented || ev.repeat || ev.isComposing || ev.ctrlKey || ev.altKey || ev.metaKey) return true;
  const el = ev.target instanceof Element ? ev.target : null;
  if (el && (el.isContentEditable || el.closest(TYPING))) return true;
  if (document.querySelector('dialog[open], [role="alertdialog"]')) return true;
  return key === ENTER && !!el && !!el.closest(ACTIVATES);
}

function onKey(ev) {
  const key = keyOf(ev);
  const button = key ? shortcuts.get(key) : null;
  if (!button || notOurs(ev, key)) return;
  if (!button.isConnected || button.disabled) return;
  ev.preventDefault();
  button.click();
}

let installed = false;

export function install() {
  if (installed) return;
  installed = true;
  document.addEventListener('keydown', onKey);
}
