// The part of VS Code's API the ast-grep extension's search code reads (run by
// tests/integration/dropin_extension.rs): the server path and the workspace folder,
// from the environment, and commands that do nothing.
const folder = process.env.PANEL_WORKSPACE;
module.exports = {
  workspace: {
    workspaceFolders: [{ uri: { fsPath: folder } }],
    getConfiguration: () => ({
      get: (key, fallback) => (key === 'serverPath' ? process.env.PANEL_SERVER : fallback),
    }),
  },
  commands: { registerCommand: () => ({ dispose() {} }), executeCommand: () => {} },
  window: { showErrorMessage: () => {}, activeTextEditor: undefined },
};
