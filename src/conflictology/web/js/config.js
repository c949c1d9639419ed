// Where the game server is. Served by `conflictology serve`, the client talks to its own origin;
// inside the browser extension, the options page stores a server URL (the builder writes the default).
export const DEFAULT_SERVER = '';

export const IN_EXTENSION = location.protocol === 'chrome-extension:';

export async function serverBase() {
  if (IN_EXTENSION && globalThis.chrome?.storage?.sync) {
    const { server } = await chrome.storage.sync.get({ server: DEFAULT_SERVER });
    return String(server || DEFAULT_SERVER).replace(/\/+$/, '');
  }
  return DEFAULT_SERVER.replace(/\/+$/, '');
}

// The link other players open: always the server's page, which works in any browser.
export function joinLink(base, code) {
  const origin = base || location.origin;
  return `${origin}/?room=${encodeURIComponent(code)}`;
}
