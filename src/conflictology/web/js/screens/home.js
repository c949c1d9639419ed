// The home screen: create a room (game, name, options) or join one by its code, or watch it.
import { h } from '../dom.js';
import { readOptions, optionsEditor } from '../forms.js';
import { gameNames, loaded } from '../info.js';
import { t } from '../i18n.js';

export function homeGame(app) {
  const offered = gameNames(app.tables);
  const chosen = app.state.homeGame;
  return offered.includes(chosen) ? chosen : offered[0] || null;
}

export function render(app) {
  const savedName = app.savedName();
  const chosen = homeGame(app);
  const gameChoice = h('div', { class: 'game-choice', role: 'radiogroup', 'aria-label': t('home.game') },
    gameNames(app.tables).map((g) => h('label', { class: ['game-card', chosen === g && 'on'] },
      h('input', { type: 'radio', name: 'game', value: g, checked: chosen === g, 'data-k': `game-${g}`,
        onchange: () => app.update({ homeGame: g }) }),
      h('span', { class: 'game-title' }, t(`games.${g}.name`)),
      h('span', { class: 'game-blurb' }, t(`games.${g}.blurb`)),
      h('span', { class: 'game-players' }, t(`games.${g}.players`)))));

  const optionInputs = chosen ? optionsEditor(chosen, null) : null;
  const onCreate = (ev) => {
    ev.preventDefault();
    const form = ev.target;
    const name = form.elements.name.value.trim();
    if (!name || !chosen) return;
    app.createRoom(chosen, name, readOptions(form, chosen));
  };
  const createForm = h('form', { class: 'panel create', 'aria-labelledby': 'create-h', onsubmit: onCreate },
    h('h2', { id: 'create-h' }, t('home.create')),
    gameChoice,
    h('label', { class: 'field' }, h('span', null, t('home.yourName')),
      h('input', { name: 'name', required: true, maxlength: 40, autocomplete: 'nickname', value: savedName, 'data-k': 'create-name' })),
    optionInputs ? h('details', { class: 'options' }, h('summary', null, t('home.options')), optionInputs) : null,
    h('button', { type: 'submit', class: 'primary', 'data-k': 'create', disabled: !chosen }, t('home.createButton')),
    // Learn to play (js/coach.js): the name typed above, or a placeholder one.
    h('div', { class: 'learn' },
      h('button', { type: 'button', class: 'secondary', 'data-k': 'learn', 'aria-describedby': 'learn-about', disabled: !chosen,
        onclick: (ev) => {
          const name = ev.target.form.elements.name.value.trim() || t('coach.you');
          if (chosen) app.startPractice(chosen, name);
        } }, t('coach.learn')),
      h('p', { id: 'learn-about', class: 'muted small' }, t('coach.learnAbout'))));

  const onJoin = (ev) => {
    ev.preventDefault();
    const form = ev.target;
    const code = normalizeCode(form.elements.code.value);
    const name = form.elements.name.value.trim();
    if (code && name) app.joinRoom(code, name);
  };
  const onWatch = (ev) => {
    const form = ev.target.closest('form');
    const code = normalizeCode(form.elements.code.value);
    if (!code) { form.elements.code.focus(); return; }
    app.openRoom(code, { watch: true });
  };
  const joinForm = h('form', { class: 'panel join', 'aria-labelledby': 'join-h', onsubmit: onJoin },
    h('h2', { id: 'join-h' }, t('home.join')),
    h('label', { class: 'field' }, h('span', null, t('home.code')),
      h('input', { name: 'code', required: true, maxlength: 12, autocomplete: 'off', autocapitalize: 'characters',
        class: 'code-input', spellcheck: 'false', 'data-k': 'join-code' })),
    h('label', { class: 'field' }, h('span', null, t('home.yourName')),
      h('input', { name: 'name', required: true, maxlength: 40, autocomplete: 'nickname', value: savedName, 'data-k': 'join-name' })),
    h('div', { class: 'row' },
      h('button', { type: 'submit', class: 'primary', 'data-k': 'join' }, t('home.joinButton')),
      h('button', { type: 'button', class: 'secondary', 'data-k': 'watch', onclick: onWatch }, t('home.watch'))));

  return h('div', { class: 'home' },
    h('section', { class: 'hero' },
      h('h1', null, t('home.title')),
      h('p', null, t('home.tagline')),
      // Opened with no server to answer (the installed app offline): the games come when it does.
      loaded() ? null : h('p', { class: 'offline', role: 'status', 'data-testid': 'offline' }, t('pwa.offline'))),
    h('div', { class: 'home-grid' }, createForm, joinForm));
}

export function normalizeCode(text) {
  return String(text || '').trim().toUpperCase().replace(/[^A-Z0-9]/g, '');
}
