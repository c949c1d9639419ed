// The options page: which Conflictology server the popup talks to (kept in chrome.storage.sync).
import { DEFAULT_SERVER } from './js/config.js';
import { setLang, lang, langTag, t } from './js/i18n.js';

const form = document.getElementById('options');
const input = document.getElementById('server');
const saved = document.getElementById('saved');

function texts() {
  document.documentElement.lang = langTag();
  document.getElementById('title').textContent = t('ext.optionsTitle');
  document.getElementById('label').textContent = t('ext.serverUrl');
  document.getElementById('help').textContent = t('ext.serverHelp', { url: DEFAULT_SERVER });
  document.getElementById('save').textContent = t('ext.save');
  document.getElementById('reset').textContent = t('ext.reset');
}

async function load() {
  setLang(lang());
  texts();
  const { server } = await chrome.storage.sync.get({ server: DEFAULT_SERVER });
  input.value = server || DEFAULT_SERVER;
}

form.addEventListener('submit', async (ev) => {
  ev.preventDefault();
  let url;
  try {
    url = new URL(input.value.trim());
    if (!['http:', 'https:'].includes(url.protocol)) throw new Error('scheme');
  } catch {
    saved.textContent = t('ext.badUrl');
    return;
  }
  const server = url.origin;
  await chrome.storage.sync.set({ server });
  input.value = server;
  saved.textContent = t('ext.saved');
});

document.getElementById('reset').addEventListener('click', async () => {
  await chrome.storage.sync.set({ server: DEFAULT_SERVER });
  input.value = DEFAULT_SERVER;
  saved.textContent = t('ext.saved');
});

load();
