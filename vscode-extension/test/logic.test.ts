// Unit tests of the extension's own decisions (node --test, no VS Code needed).
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  bundledWheel,
  chooseInterpreter,
  commandArguments,
  countOurs,
  importFailure,
  installCommand,
  mayBootstrap,
  privateEnvironment,
  serverSettings,
  statusText,
  statusTooltip,
} from "../src/logic";

test("the graphmend.python setting wins, then the Python extension, then python3", () => {
  assert.deepEqual(chooseInterpreter("/venv/bin/python", "/other/python"), { path: "/venv/bin/python", source: "setting" });
  assert.deepEqual(chooseInterpreter("  ", "/other/python"), { path: "/other/python", source: "python-extension" });
  assert.deepEqual(chooseInterpreter(undefined, undefined), { path: "python3", source: "default" });
  assert.deepEqual(chooseInterpreter("", ""), { path: "python3", source: "default" });
});

test("a ~ in the setting is the home directory", () => {
  const home = process.env.HOME;
  process.env.HOME = "/home/ada";
  try {
    assert.equal(chooseInterpreter("~/venv/bin/python", undefined).path, "/home/ada/venv/bin/python");
  } finally {
    process.env.HOME = home;
  }
});

test("server settings leave out the extension's own keys and keep nulls", () => {
  const settings = serverSettings({ python: "/x", trace: { server: "off" }, debounceMs: 20, select: null, exclude: ["a/**"] });
  assert.deepEqual(settings, { debounceMs: 20, select: null, exclude: ["a/**"] });
});

test("the install command quotes interpreters with spaces", () => {
  assert.equal(installCommand("python3"), "python3 -m pip install graphmend");
  assert.equal(installCommand("/Program Files/py/python"), '"/Program Files/py/python" -m pip install graphmend');
});

test("import failures say what is missing", () => {
  const missing = importFailure("/v/python", "Traceback...\nModuleNotFoundError: No module named 'graphmend'\n", 1);
  assert.match(missing, /needs the graphmend package in \/v\/python \(ModuleNotFoundError: No module named 'graphmend'\)/);
  assert.match(importFailure("/nope/python", "spawn /nope/python ENOENT", "ENOENT"), /interpreter was not found/);
});

test("the status item counts only GraphMend's diagnostics", () => {
  assert.equal(countOurs([{ source: "graphmend" }, { source: "Pylance" }, { source: "graphmend" }, {}]), 2);
  assert.equal(statusText(2), "$(warning) GraphMend: 2 breaks");
  assert.equal(statusText(1), "$(warning) GraphMend: 1 break");
  assert.equal(statusText(0), "$(check) GraphMend");
  assert.match(statusTooltip(3), /3 torch.compile graph breaks/);
});

test("the palette's confirm is about the active file; a code lens's target is kept", () => {
  assert.deepEqual(commandArguments("graphmend.confirm", [], "file:///w/net.py"), [{ uri: "file:///w/net.py" }]);
  assert.deepEqual(commandArguments("graphmend.confirm", [{ target: "/w/net.py:Net" }], "file:///w/x.py"), [{ target: "/w/net.py:Net" }]);
  assert.deepEqual(commandArguments("graphmend.confirm", [], undefined), []);
  assert.deepEqual(commandArguments("graphmend.mendWorkspace", [], "file:///w/net.py"), []);
});

test("the shipped server is set up only for an interpreter the user did not name", () => {
  assert.equal(mayBootstrap("default"), true);
  assert.equal(mayBootstrap("python-extension"), true);
  assert.equal(mayBootstrap("setting"), false); // a named interpreter without graphmend: say so, do not replace it
  assert.equal(mayBootstrap("bundled"), false);
});

test("the private environment lives under the extension's storage, per extension version", () => {
  assert.deepEqual(privateEnvironment("/home/ada/.vscode/gs", "0.1.0", "linux"), {
    dir: "/home/ada/.vscode/gs/server-0.1.0",
    python: "/home/ada/.vscode/gs/server-0.1.0/bin/python",
  });
  assert.equal(privateEnvironment("C:\\gs", "0.1.0", "win32").python, "C:\\gs\\server-0.1.0\\Scripts\\python.exe");
});

test("the server wheel is found among the bundled files", () => {
  assert.equal(bundledWheel(["README.txt", "graphmend-0.1.0-py3-none-any.whl"]), "graphmend-0.1.0-py3-none-any.whl");
  assert.equal(bundledWheel(["libcst-1.9.0-cp311-cp311-manylinux_2_28_x86_64.whl"]), undefined);
  assert.equal(bundledWheel([]), undefined);
});
