// The extension's service worker: it seeds the server URL on install and answers the pages'
// questions. The client itself runs in the popup (popup.html) or in a full tab.
import { DEFAULT_SERVER } from './js/config.js';

chrome.runtime.onInstalled.addListener(async () => {
  const { server } = await chrome.storage.sync.get({ server: '' });
  if (!server) await chrome.storage.sync.set({ server: DEFAULT_SERVER });
});

// The last screen a client page reported (the toolbar popup has no tab to look at).
globalThis.lastScreen = null;

chrome.runtime.onMessage.addListener((msg, _sender, reply) => {
  if (msg && msg.type === 'screen') {
    globalThis.lastScreen = { screen: msg.screen, code: msg.code || null, popup: !!msg.popup };
    return false;
  }
  if (msg && msg.type === 'server') {
    chrome.storage.sync.get({ server: DEFAULT_SERVER }).then(({ server }) => reply({ server }));
    return true;
  }
  return false;
});
