// The extension's decisions, kept free of the `vscode` module so that they are unit-tested with
// node's own test runner (test/logic.test.ts); extension.ts only wires them to the editor.

/** Where the interpreter that runs `graphmend lsp` came from, in the order it is looked for. */
export type InterpreterSource = "setting" | "python-extension" | "default";

export interface Interpreter {
  path: string;
  source: InterpreterSource | "bundled"; // "bundled": the private environment the extension set up
}

/**
 * The `graphmend.python` setting wins; then the Python extension's active interpreter; then
 * `python3`. Blank values count as unset.
 */
export function chooseInterpreter(setting: string | undefined, pythonExtension: string | undefined): Interpreter {
  if (setting && setting.trim()) {
    return { path: expandHome(setting.trim()), source: "setting" };
  }
  if (pythonExtension && pythonExtension.trim()) {
    return { path: pythonExtension.trim(), source: "python-extension" };
  }
  return { path: "python3", source: "default" };
}

function expandHome(path: string): string {
  const home = process.env.HOME ?? process.env.USERPROFILE;
  return home && (path === "~" || path.startsWith("~/")) ? home + path.slice(1) : path;
}

/** Settings that belong to the extension itself, not to the server. */
const CLIENT_ONLY = new Set(["python", "trace"]);

/**
 * The server's settings from the `graphmend` configuration section: what the server validates
 * (it reports and defaults a wrong value), minus the extension's own keys. `null` means "use
 * pyproject.toml" and is passed through.
 */
export function serverSettings(section: Record<string, unknown>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(section)) {
    if (!CLIENT_ONLY.has(key) && value !== undefined && typeof value !== "function") {
      result[key] = value;
    }
  }
  return result;
}

/** The shell command that installs the server into an interpreter (quoted for a POSIX shell or PowerShell). */
export function installCommand(python: string): string {
  const quoted = /[\s"'$`]/.test(python) ? `"${python.replace(/(["\\$`])/g, "\\$1")}"` : python;
  return `${quoted} -m pip install graphmend`;
}

/** Why the server cannot start, for the error message, from the failed import's stderr. */
export function importFailure(python: string, stderr: string, code: string | number | null): string {
  const lines = stderr.trim().split("\n").filter((line) => line.trim());
  const last = lines.length ? lines[lines.length - 1].trim() : `exit status ${code}`;
  if (/ENOENT|not found|No such file/i.test(last) || code === "ENOENT") {
    return `GraphMend could not run ${python}: the interpreter was not found. Set "graphmend.python" to a Python with graphmend installed.`;
  }
  return `GraphMend needs the graphmend package in ${python} (${last}).`;
}

/** Status bar text for the number of graph breaks GraphMend reports in the active file. */
export function statusText(count: number | undefined): string {
  if (count === undefined) {
    return "$(debug-disconnect) GraphMend";
  }
  if (count === 0) {
    return "$(check) GraphMend";
  }
  return `$(warning) GraphMend: ${count} break${count === 1 ? "" : "s"}`;
}

export function statusTooltip(count: number | undefined): string {
  if (count === undefined) {
    return "GraphMend: no Python file is active";
  }
  return count === 0
    ? "GraphMend found no torch.compile graph breaks in this file"
    : `GraphMend found ${count} torch.compile graph break${count === 1 ? "" : "s"} in this file. Click to open the Problems panel.`;
}

/** Diagnostics GraphMend itself reported (a file's problems come from every linter). */
export function countOurs(diagnostics: ReadonlyArray<{ source?: string }>): number {
  return diagnostics.filter((d) => d.source === "graphmend").length;
}

/** The arguments sent with a server command: the palette runs `graphmend.confirm` without any,
 * and then it is about the active file (code lenses pass their target themselves). */
export function commandArguments(command: string, args: unknown[], activeUri: string | undefined): unknown[] {
  if (command === "graphmend.confirm" && args.length === 0 && activeUri) {
    return [{ uri: activeUri }];
  }
  return args;
}

/**
 * Whether the extension may set up its own environment for the server when the interpreter
 * cannot import graphmend: not when the user named an interpreter in `graphmend.python` (then
 * that is the one to fix), yes for the Python extension's or the default one.
 */
export function mayBootstrap(source: InterpreterSource | "bundled"): boolean {
  return source === "python-extension" || source === "default";
}

/** The private environment's directory and interpreter, under the extension's storage folder. */
export function privateEnvironment(storage: string, version: string, platform: string): { dir: string; python: string } {
  const sep = platform === "win32" ? "\\" : "/";
  const dir = `${storage}${sep}server-${version}`;
  const python = platform === "win32" ? `${dir}\\Scripts\\python.exe` : `${dir}/bin/python`;
  return { dir, python };
}

/** The graphmend wheel among the files shipped in the extension's `bundled/` folder. */
export function bundledWheel(files: string[]): string | undefined {
  return files.filter((f) => /^graphmend-[^-]+-py3-none-any\.whl$/.test(f)).sort().pop();
}
