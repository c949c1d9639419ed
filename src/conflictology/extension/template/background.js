// The extension's service worker: it seeds the server URL on install, makes the toolbar icon open
// the side panel, keeps the toolbar badge that says a decision is pending, and answers the pages'
// questions. The client itself runs in the side panel (sidepanel.html), a tab, or the popup.
import { DEFAULT_SERVER } from './js/config.js';

// The toolbar icon opens the side panel (it stays open while the player clicks into the call).
// Where the side panel API is missing, the icon opens the same client as a popup.
async function panelOnClick() {
  if (chrome.sidePanel && chrome.sidePanel.setPanelBehavior) {
    await chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: true }).catch(() => {});
  } else {
    await chrome.action.setPopup({ popup: 'popup.html' });
  }
}

chrome.runtime.onInstalled.addListener(async () => {
  const { server } = await chrome.storage.sync.get({ server: '' });
  if (!server) await chrome.storage.sync.set({ server: DEFAULT_SERVER });
  await panelOnClick();
});
chrome.runtime.onStartup.addListener(panelOnClick);

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

// The badge: each open client page reports over a port what it should say ('' when no decision of
// its player is pending; the seconds left, or '!'); a page that closes takes its report with it.
const reports = new Map();

function showBadge() {
  let text = '';
  for (const value of reports.values()) {
    if (value) { text = value; break; }
  }
  chrome.action.setBadgeText({ text });
  if (text) chrome.action.setBadgeBackgroundColor({ color: '#e05d44' });
}

chrome.runtime.onConnect.addListener((port) => {
  if (port.name !== 'client') return;
  reports.set(port, '');
  port.onMessage.addListener((msg) => {
    if (msg && msg.type === 'badge') {
      reports.set(port, String(msg.text || '').slice(0, 4));
      showBadge();
    }
  });
  port.onDisconnect.addListener(() => {
    reports.delete(port);
    showBadge();
  });
});
