// The language menu of the header (the game's page and the replay viewer's). The header holds only a
// small button, a globe and the current language's code ("TR"), so that eight languages take no more
// room than two did and the header still fits a 360 px phone; it opens a sheet in the page's modal
// dialog (the one the rules use, #rules) listing every language named in itself, each marked with its
// own `lang` so that it is read in its own voice and found by someone who reads none of the page.
// Escape or ✕ closes it; a choice closes it, switches the language and gives the focus back to the
// header's button.
import { clear, h, svg } from './dom.js';
import { lang, LANGUAGES, langTag, setLang, t } from './i18n.js';

const GLOBE = '<svg viewBox="0 0 24 24" width="14" height="14" aria-hidden="true" focusable="false" fill="none" '
  + 'stroke="currentColor" stroke-width="2"><circle cx="12" cy="12" r="9"/>'
  + '<path d="M3 12h18M12 3c2.5 2.7 3.8 5.7 3.8 9s-1.3 6.3-3.8 9M12 3c-2.5 2.7-3.8 5.7-3.8 9s1.3 6.3 3.8 9"/></svg>';

// The page's dialog (index.html has one; the replay viewer's page gets one the first time).
function dialog() {
  let d = document.getElementById('rules');
  if (!d) {
    d = h('dialog', { id: 'rules', class: 'rules' });
    document.body.appendChild(d);
  }
  return d;
}

function openSheet(onPick) {
  const d = dialog();
  if (d.open) d.close();
  clear(d);
  d.setAttribute('aria-label', t('common.language'));
  d.dataset.testid = 'lang-sheet';
  d.appendChild(h('div', { class: 'rules-head' },
    h('h2', null, t('common.language')),
    h('button', { type: 'button', class: 'ghost', 'aria-label': t('common.close'), onclick: () => d.close() }, '✕')));
  const here = lang();
  d.appendChild(h('div', { class: 'row' }, Object.entries(LANGUAGES).map(([code, dict]) => h('button', {
    type: 'button', class: code === here ? 'primary' : 'secondary', lang: langTag(code), 'aria-pressed': String(code === here),
    'data-k': `lang-${code}`,
    onclick: () => {
      d.close();
      if (code === here) return;
      setLang(code);
      onPick(code);
    },
  }, dict.meta.name))));
  d.showModal();
  const current = d.querySelector(`[data-k="lang-${here}"]`);
  if (current) current.focus();
}

// `onPick(code)` draws the page again once the language has changed.
export function languageMenu(onPick) {
  const here = LANGUAGES[lang()].meta;
  return h('button', {
    // On one line (a narrow header would otherwise stack the globe over the code).
    type: 'button', class: 'ghost small', style: { whiteSpace: 'nowrap' }, 'data-k': 'lang', 'aria-haspopup': 'dialog',
    title: t('common.language'), onclick: () => openSheet(onPick),
  // Its name begins with the code it shows ("EN Language: English"): a name that hid the visible
  // word would fail the label-in-name rule (WCAG 2.5.3) and voice control ("click EN").
  }, svg(GLOBE), ' ', h('span', { class: 'lang-code' }, here.short), h('span', { class: 'sr-only' }, ` ${t('common.languageIs', { name: here.name })}`));
}
