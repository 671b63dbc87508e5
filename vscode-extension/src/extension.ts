// GraphMend for VS Code: starts `graphmend lsp` and adds the palette commands and a status item.
// Diagnostics, quick fixes, fix-all and the workspace commands all come from the server.
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";
import {
  chooseInterpreter,
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

/** Whether `python -m graphmend lsp` can start; explains and offers the install if not. */
async function canStart(interpreter: Interpreter): Promise<boolean> {
  const failure = await new Promise<string | undefined>((resolve) => {
    execFile(interpreter.path, ["-c", "import graphmend.lsp.server"], { timeout: 60000 }, (error, _stdout, stderr) => {
      if (!error) {
        resolve(undefined);
      } else {
        const code = (error as NodeJS.ErrnoException).code ?? null;
        resolve(importFailure(interpreter.path, String(stderr || error.message), code));
      }
    });
  });
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
  const interpreter = await resolveInterpreter();
  output?.appendLine(`GraphMend: using ${interpreter.path} (from ${interpreter.source})`);
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
