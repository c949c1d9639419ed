// The client's version. The server serves this module with its own version written in
// (server/webclient.py): the page compares it with `client_version` from GET /api/info. As a file
// (the extension's copy, a page served by anything else) it says nothing, and nothing is compared.
export const CLIENT_VERSION = null;
