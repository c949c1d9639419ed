// The rules sheet, one click away at every screen: a short player's summary from the i18n files.
import { h } from './dom.js';
import { t } from './i18n.js';

export function rulesSheet(game) {
  const sections = t(`rules.${game}`);
  return h('div', { class: 'rules-body' },
    h('h2', null, t(`games.${game}.name`)),
    (Array.isArray(sections) ? sections : []).map((s) => h('section', null,
      h('h3', null, s.title),
      h('ul', null, s.items.map((i) => h('li', null, i))))));
}
