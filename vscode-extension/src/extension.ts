// GraphMend for VS Code: starts `graphmend lsp` and adds the palette commands and a status item.
// Diagnostics, quick fixes, fix-all and the workspace commands all come from the server.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";
import {
  bundledWheel,
  chooseInterpreter,
  mayBootstrap,
  privateEnvironment,
  commandArguments,
  countOurs,
  importFailure,
  installCommand,
  Interpreter,
  serverSettings,
  statusText,
  statusTooltip,
} from "./logic";

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("GraphMend", { log: true });
  context.subscriptions.push(output);
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.command = "workbench.actions.view.problems";
  context.subscriptions.push(status);

  context.subscriptions.push(
    vscode.commands.registerCommand("graphmend.restart", async () => {
      await stopClient();
      await startClient(context);
    }),
    vscode.commands.registerCommand("graphmend.showOutput", () => output?.show(true)),
    vscode.languages.onDidChangeDiagnostics(() => updateStatus(status)),
    vscode.window.onDidChangeActiveTextEditor(() => updateStatus(status)),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("graphmend.python")) {
        await stopClient();
        await startClient(context);
      }
    }),
  );
  updateStatus(status);
  await startClient(context);
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

async function resolveInterpreter(): Promise<Interpreter> {
  const setting = vscode.workspace.getConfiguration("graphmend").get<string>("python");
  return chooseInterpreter(setting, setting ? undefined : await pythonExtensionInterpreter());
}

/** The Python extension's active interpreter, if that extension is installed. */
async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension("ms-python.python");
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
    const environments = api?.environments;
    if (environments?.getActiveEnvironmentPath) {
      const active = environments.getActiveEnvironmentPath(resource);
      const resolved = await environments.resolveEnvironment?.(active);
      return resolved?.executable?.uri?.fsPath ?? active?.path;
    }
    const details = api?.settings?.getExecutionDetails?.(resource);
    return details?.execCommand?.[0];
  } catch (error) {
    output?.appendLine(`GraphMend: could not ask the Python extension for its interpreter: ${error}`);
    return undefined;
  }
}

/** Why `python -c "import graphmend.lsp.server"` fails, or undefined when it works. */
function importProblem(python: string): Promise<string | undefined> {
  return new Promise<string | undefined>((resolve) => {
    execFile(python, ["-c", "import graphmend.lsp.server"], { timeout: 60000 }, (error, _stdout, stderr) => {
      if (!error) {
        resolve(undefined);
      } else {
        const code = (error as NodeJS.ErrnoException).code ?? null;
        resolve(importFailure(python, String(stderr || error.message), code));
      }
    });
  });
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 600000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      output?.appendLine(`GraphMend: ${command} ${args.join(" ")}\n${stdout}${stderr}`);
      if (error) {
        reject(new Error(String(stderr || error.message).trim().split("\n").slice(-3).join(" ")));
      } else {
        resolve();
      }
    });
  });
}

/**
 * The server installed from the wheel shipped in the extension into a private environment made
 * with `base` (once per extension version, under the extension's storage folder), as ruff's
 * extension ships its binary: installing the extension is enough. torch is not needed for the
 * static analysis; pip fetches GraphMend's few dependencies. Undefined when that fails.
 */
async function privateServer(context: vscode.ExtensionContext, base: Interpreter): Promise<Interpreter | undefined> {
  const version = String(context.extension.packageJSON.version ?? "0");
  const env = privateEnvironment(context.globalStorageUri.fsPath, version, process.platform);
  if (fs.existsSync(env.python) && (await importProblem(env.python)) === undefined) {
    return { path: env.python, source: "bundled" };
  }
  const bundled = context.asAbsolutePath("bundled");
  const wheel = bundledWheel(fs.existsSync(bundled) ? fs.readdirSync(bundled) : []);
  if (!wheel) {
    output?.appendLine("GraphMend: this build of the extension ships no server wheel");
    return undefined;
  }
  try {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "GraphMend: setting up its language server (first start)" },
      async (progress) => {
        fs.mkdirSync(context.globalStorageUri.fsPath, { recursive: true });
        progress.report({ message: `creating an environment with ${base.path}` });
        await run(base.path, ["-m", "venv", "--clear", env.dir]);
        progress.report({ message: "installing graphmend and its dependencies" });
        await run(env.python, ["-m", "pip", "install", "--disable-pip-version-check", "--quiet", path.join(bundled, wheel)]);
      },
    );
  } catch (error) {
    const message = `GraphMend could not set up its server with ${base.path}: ${error instanceof Error ? error.message : error}`;
    output?.appendLine(message);
    void vscode.window.showErrorMessage(message);
    return undefined;
  }
  const problem = await importProblem(env.python);
  if (problem !== undefined) {
    output?.appendLine(problem);
    return undefined;
  }
  return { path: env.python, source: "bundled" };
}

/** Whether `python -m graphmend lsp` can start; explains and offers the install if not. */
async function canStart(interpreter: Interpreter): Promise<boolean> {
  const failure = await importProblem(interpreter.path);
  if (failure === undefined) {
    return true;
  }
  output?.appendLine(failure);
  const install = "Install in a terminal";
  const choose = "Set graphmend.python";
  const answer = await vscode.window.showErrorMessage(failure, install, choose);
  if (answer === install) {
    const terminal = vscode.window.createTerminal("GraphMend install");
    terminal.show();
    terminal.sendText(installCommand(interpreter.path));
  } else if (answer === choose) {
    await vscode.commands.executeCommand("workbench.action.openSettings", "graphmend.python");
  }
  return false;
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  let interpreter = await resolveInterpreter();
  output?.appendLine(`GraphMend: using ${interpreter.path} (from ${interpreter.source})`);
  if (mayBootstrap(interpreter.source) && (await importProblem(interpreter.path)) !== undefined) {
    // graphmend is not installed there: run the server shipped with the extension instead
    interpreter = (await privateServer(context, interpreter)) ?? interpreter;
    output?.appendLine(`GraphMend: using ${interpreter.path} (from ${interpreter.source})`);
  }
  if (!(await canStart(interpreter))) {
    return;
  }
  const serverOptions: ServerOptions = {
    command: interpreter.path,
    args: ["-m", "graphmend", "lsp"],
    transport: TransportKind.stdio,
    options: { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
  };
  const section = vscode.workspace.getConfiguration("graphmend");
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      // Python cells of notebooks: synced as notebook documents, analysed together by the server
      { notebook: "*", language: "python" },
    ],
    outputChannel: output,
    traceOutputChannel: output,
    initializationOptions: serverSettings(JSON.parse(JSON.stringify(section))),
    // Sends `workspace/didChangeConfiguration` with the whole section when a setting changes.
    synchronize: { configurationSection: "graphmend" },
    middleware: {
      // "Confirm breaks with TorchDynamo" from the palette carries no arguments: confirm the
      // samples of the active file (the server falls back to every open file's, then all).
      executeCommand: (command, args, next) =>
        next(command, commandArguments(command, args, vscode.window.activeTextEditor?.document.uri.toString())),
    },
  };
  // The server's commands (graphmend.mendWorkspace, graphmend.checkWorkspace, graphmend.confirm) are registered
  // as VS Code commands by the client itself; package.json only gives them palette titles.
  client = new LanguageClient("graphmend", "GraphMend", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (error) {
    output?.appendLine(`GraphMend: the server did not start: ${error}`);
    void vscode.window.showErrorMessage(`GraphMend: the server did not start (${error}). See "GraphMend: Show output".`);
    client = undefined;
    return;
  }
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

async function stopClient(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    await running.stop();
  }
}

function updateStatus(status: vscode.StatusBarItem): void {
  const document = vscode.window.activeTextEditor?.document;
  if (!document || document.languageId !== "python") {
    status.hide();
    return;
  }
  const count = countOurs(vscode.languages.getDiagnostics(document.uri));
  status.text = statusText(count);
  status.tooltip = statusTooltip(count);
  status.show();
}
