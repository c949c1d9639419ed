// A room's rule options and settings: the host's editor (the home screen's create form, the lobby's
// panel, where each change is sent at once) and the summary others see. Built from GET /api/info
// (info.js): the client names no option, default or limit itself.
import { h } from './dom.js';
import { t } from './i18n.js';
import { formOptions, formSettings } from './info.js';

// The clocks the timers switch stops and starts: the summary shows them, or that timers are off.
const DECISION_CLOCKS = ['turn_seconds', 'response_seconds', 'choice_seconds'];

// `onOption(key, value)` / `onSetting(key, value)`: the lobby's live edits; without them (a form) the
// values are read on submit by readOptions.
export function optionsEditor(game, room, { onOption = null, onSetting = null } = {}) {
  const current = (room && room.options) || {};
  const settings = (room && room.settings) || {};
  const items = [];
  for (const opt of formOptions(game)) {
    const value = current[opt.key] !== undefined ? current[opt.key] : opt.default;
    if (opt.kind === 'bool') {
      items.push(h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: `opt.${opt.key}`, checked: !!value, 'data-k': `opt-${opt.key}`,
          onchange: onOption && ((ev) => onOption(opt.key, ev.target.checked)) }),
        h('span', null, t(`options.${opt.key}`))));
    } else if (opt.kind === 'count') {
      // '' leaves the option out: the rules' own number (by the table's size).
      items.push(h('label', { class: 'field inline' }, h('span', null, t(`options.${opt.key}`)),
        h('select', { name: `opt.${opt.key}`, 'data-k': `opt-${opt.key}`,
          onchange: onOption && ((ev) => onOption(opt.key, ev.target.value === '' ? null : Number(ev.target.value))) },
        h('option', { value: '', selected: value === null }, t('options.byRules')),
        opt.choices.map((c) => h('option', { value: String(c), selected: value === c }, String(c))))));
    } else {
      items.push(h('fieldset', { class: 'set' }, h('legend', null, t(`options.${opt.key}`)),
        opt.choices.map((c) => h('label', { class: 'check' },
          h('input', { type: 'checkbox', name: `opt.${opt.key}`, value: c, checked: value.includes(c), 'data-k': `opt-${opt.key}-${c}`,
            // The boxes as they are ticked now, not the set as drawn: two quick ticks both count.
            onchange: onOption && ((ev) => {
              const ticked = ev.target.closest('fieldset').querySelectorAll(`input[name="opt.${opt.key}"]:checked`);
              onOption(opt.key, Array.from(ticked, (i) => i.value));
            }) }),
          h('span', null, t(`${game}.roles.${c}`))))));
    }
  }
  for (const st of formSettings()) {
    const value = settings[st.key] !== undefined && settings[st.key] !== null ? settings[st.key] : st.default;
    if (st.kind === 'bool') {
      items.push(h('label', { class: 'check' },
        h('input', { type: 'checkbox', name: `set.${st.key}`, checked: !!value, 'data-k': `set-${st.key}`,
          onchange: onSetting && ((ev) => onSetting(st.key, ev.target.checked)) }),
        h('span', null, t(`settings.${st.key}`))));
    } else {
      items.push(h('label', { class: 'field inline' }, h('span', null, t(`settings.${st.key}`)),
        h('input', { type: 'number', min: st.min, max: st.max, step: 1, name: `set.${st.key}`, value: String(value), 'data-k': `set-${st.key}`,
          onchange: onSetting && ((ev) => onSetting(st.key, Number(ev.target.value))) })));
    }
  }
  return items.length ? h('div', { class: 'option-list' }, items) : null;
}

// The create form's options and settings, as POST /api/rooms takes them.
export function readOptions(form, game) {
  const options = {};
  for (const opt of formOptions(game)) {
    const inputs = [...form.querySelectorAll(`[name="opt.${opt.key}"]`)];
    if (opt.kind === 'bool') options[opt.key] = inputs[0].checked;
    else if (opt.kind === 'count') { if (inputs[0].value !== '') options[opt.key] = Number(inputs[0].value); }
    else options[opt.key] = inputs.filter((i) => i.checked).map((i) => i.value);
  }
  const settings = {};
  for (const st of formSettings()) {
    const input = form.querySelector(`[name="set.${st.key}"]`);
    if (!input) continue;
    settings[st.key] = st.kind === 'bool' ? input.checked : Number(input.value);
  }
  return { options, settings };
}

export function optionSummary(room) {
  const lines = [];
  for (const opt of formOptions(room.game)) {
    const v = room.options && room.options[opt.key] !== undefined ? room.options[opt.key] : opt.default;
    const shown = opt.kind === 'bool' ? t(v ? 'common.on' : 'common.off')
      : opt.kind === 'count' ? (v === null ? t('options.byRules') : String(v))
        : (v.length ? v.map((c) => t(`${room.game}.roles.${c}`)).join(', ') : t('common.none'));
    lines.push(h('li', null, h('span', null, t(`options.${opt.key}`)), h('strong', null, shown)));
  }
  const st = room.settings || {};
  if (st.timers === false) lines.push(h('li', null, h('span', null, t('settings.timers')), h('strong', null, t('common.off'))));
  else {
    for (const key of DECISION_CLOCKS) {
      if (st[key]) lines.push(h('li', null, h('span', null, t(`settings.${key}`)), h('strong', null, `${st[key]} s`)));
    }
  }
  return h('ul', { class: 'option-summary' }, lines);
}
