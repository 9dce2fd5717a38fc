// Sends the ast-grep extension's search panel one query as its webview does (a
// `search` message for a pattern, `yaml` for a YAML rule) and prints, as one JSON
// line, every result the panel would list (sorted: the server's file order follows its
// threads) and the errors it would show. Usage: node drive.cjs BUNDLE KIND QUERY_JSON,
// with PANEL_SERVER and PANEL_WORKSPACE set. BUNDLE is the extension's own
// src/extension/search.ts and common.ts, bundled with vscode.cjs standing for VS Code.
console.debug = () => {};
console.info = () => {};
const { parentPort } = require(process.argv[2]);
const [kind, query] = [process.argv[3], JSON.parse(process.argv[4])];
const shown = [];
let pipe;
parentPort.implementChannel({
  send(message) {
    if (message.t === 'searchResultStreaming') shown.push(...message.p.searchResult);
    if (message.t === 'error') shown.push({ error: String(message.p.error) });
    if (message.t === 'searchEnd') {
      const key = (r) => JSON.stringify(r);
      shown.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
      process.stdout.write(JSON.stringify(shown) + '\n');
      process.exit(0);
    }
  },
  accept(p) {
    pipe = p;
  },
});
setTimeout(() => {
  process.stderr.write('no searchEnd after 60 s\n');
  process.exit(1);
}, 60000);
pipe({ t: kind, p: { id: 1, ...query }, _$: 'un' });
