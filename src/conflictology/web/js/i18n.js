// Language handling: every visible string comes from i18n/<lang>.js; this module picks the language
// (?lang=xx, else a saved choice, else the browser's) and fills in {placeholders}. The eight are the
// languages these games are most played in online; a key one of them lacks falls back to English.
import en from '../i18n/en.js';
import es from '../i18n/es.js';
import pt from '../i18n/pt.js';
import fr from '../i18n/fr.js';
import de from '../i18n/de.js';
import it from '../i18n/it.js';
import pl from '../i18n/pl.js';
import tr from '../i18n/tr.js';

// In the order the header's menu offers them.
export const LANGUAGES = { en, es, pt, fr, de, it, pl, tr };
const STORE_KEY = 'conflictology:lang';

function initialLanguage() {
  const url = new URLSearchParams(location.search).get('lang');
  if (url && LANGUAGES[url]) return url;
  try {
    const saved = localStorage.getItem(STORE_KEY);
    if (saved && LANGUAGES[saved]) return saved;
  } catch { /* storage may be blocked */ }
  for (const tag of navigator.languages || [navigator.language || 'en']) {
    const base = String(tag).slice(0, 2).toLowerCase();
    if (LANGUAGES[base]) return base;
  }
  return 'en';
}

let current = initialLanguage();

export function lang() { return current; }

// The BCP 47 tag for <html lang> (and a screen reader's voice): 'pt-BR' for the Brazilian Portuguese
// the code 'pt' names.
export function langTag(code = current) {
  const dict = LANGUAGES[code];
  return (dict && dict.meta && dict.meta.tag) || code;
}

export function setLang(code) {
  if (!LANGUAGES[code]) return;
  current = code;
  try { localStorage.setItem(STORE_KEY, code); } catch { /* ignore */ }
  document.documentElement.lang = langTag(code);
}

function lookup(dict, key) {
  let node = dict;
  for (const part of key.split('.')) {
    if (node === undefined || node === null) return undefined;
    node = node[part];
  }
  return node;
}

// t('capitol.roles.banker'), t('lobby.seats', {n: 3}); a missing key falls back to English, then the key.
export function t(key, params) {
  let value = lookup(LANGUAGES[current], key);
  if (value === undefined) value = lookup(en, key);
  if (value === undefined) return key;
  if (typeof value === 'function') return value(params || {});
  if (typeof value !== 'string') return value;
  if (!params) return value;
  return value.replace(/\{(\w+)\}/g, (m, name) => (params[name] !== undefined ? String(params[name]) : m));
}

export function has(key) {
  return lookup(LANGUAGES[current], key) !== undefined || lookup(en, key) !== undefined;
}
