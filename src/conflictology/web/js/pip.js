// A mini-table over the video call (desktop Chrome): your cards, the pending claim and the answer
// buttons in a Document Picture-in-Picture window that floats above Zoom or Meet. Where the API is
// missing the button is not offered (docs/web.md "Beside the call").
import { clear, h } from './dom.js';
import { t } from './i18n.js';

let win = null;
let build = null;

export function supported() {
  return typeof globalThis.documentPictureInPicture === 'object' && globalThis.documentPictureInPicture !== null
    && typeof globalThis.documentPictureInPicture.requestWindow === 'function';
}

// The button, or null where Document Picture-in-Picture does not exist. `builder()` returns the
// mini-table's element (built in this page: its buttons act here).
export function pipButton(builder) {
  if (!supported()) return null;
  build = builder;
  const open = !!win;
  return h('button', { type: 'button', class: 'ghost small', 'data-k': 'pip', 'aria-pressed': String(open),
    title: t('pip.hint'), onclick: () => (open ? close() : openWindow()) }, open ? t('pip.close') : t('pip.open'));
}

async function openWindow() {
  try {
    win = await globalThis.documentPictureInPicture.requestWindow({ width: 380, height: 460 });
  } catch {
    win = null;
    return;
  }
  const doc = win.document;
  doc.documentElement.lang = document.documentElement.lang;
  for (const sheet of document.querySelectorAll('link[rel="stylesheet"]')) {
    doc.head.appendChild(h('link', { rel: 'stylesheet', href: sheet.href }));
  }
  doc.title = 'Conflictology';
  doc.body.classList.add('pip');
  win.addEventListener('pagehide', () => { win = null; refreshOwnButton(); });
  refresh();
  refreshOwnButton();
}

function close() {
  if (win) win.close();
  win = null;
  refreshOwnButton();
}

function refreshOwnButton() {
  const btn = document.querySelector('[data-k=pip]');
  if (btn) {
    btn.textContent = win ? t('pip.close') : t('pip.open');
    btn.setAttribute('aria-pressed', String(!!win));
  }
}

// After every render of the page: the mini-table again (nothing when it is not open).
export function refresh() {
  if (!win || !build) return;
  const body = win.document.body;
  clear(body);
  const el = build();
  if (el) body.appendChild(win.document.adoptNode(el));
}

export function isOpen() { return !!win; }

// The countdowns of the mini-table (the page's tick updates them with its own).
export function deadlines() {
  return win ? [...win.document.querySelectorAll('[data-deadline]')] : [];
}
