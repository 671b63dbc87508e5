-- GraphMend for Neovim: diagnostics, quick fixes and the workspace commands of `graphmend lsp`.
--
-- Works from Neovim 0.7 (vim.lsp.start_client) to 0.11+ (vim.lsp.config / vim.lsp.enable).
-- Put this file on your 'runtimepath' (e.g. ~/.config/nvim/lua/graphmend.lua) and call:
--
--   require('graphmend').setup({
--     cmd = { 'graphmend', 'lsp' },            -- or { '/path/to/venv/bin/python', '-m', 'graphmend', 'lsp' }
--     settings = { debounceMs = 75 },           -- see the README's "Editor settings"
--   })
--
-- Quick fixes come through the usual `vim.lsp.buf.code_action()`. Commands:
--   :GraphMendMendWorkspace   apply every safe fix in the workspace (one undoable edit per file)
--   :GraphMendCheckWorkspace  diagnostics for the files that are not open
--   :GraphMendFixAll          apply every safe fix in the current buffer

local M = {}

M.name = 'graphmend'
M.defaults = {
  cmd = { 'graphmend', 'lsp' },
  settings = {},
  root_markers = { 'pyproject.toml', 'setup.cfg', 'setup.py', '.git' },
}

local function root_of(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = vim.fn.fnamemodify(name, ':p:h')
  for _, marker in ipairs(markers) do
    local found = vim.fn.findfile(marker, start .. ';')
    if found == '' then
      found = vim.fn.finddir(marker, start .. ';')
    end
    if found ~= '' then
      return (vim.fn.fnamemodify(found, ':p:h'):gsub('/%.git/?$', ''))
    end
  end
  return start
end

-- The GraphMend client attached to a buffer (nil when none is).
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr, name = M.name })
    or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(clients) do
    if client.name == M.name then
      return client
    end
  end
end

-- Run a server command and return its result (blocks up to `timeout` ms).
function M.execute(command, bufnr, timeout)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    vim.notify('GraphMend is not attached to this buffer', vim.log.levels.WARN)
    return nil
  end
  local response = vim.lsp.buf_request_sync(bufnr, 'workspace/executeCommand',
    { command = command, arguments = {} }, timeout or 600000)
  local answer = response and response[client.id]
  if answer and answer.err then
    vim.notify('GraphMend: ' .. vim.inspect(answer.err), vim.log.levels.ERROR)
    return nil
  end
  return answer and answer.result
end

-- Apply the file's fix-all action (every safe rewrite).
function M.fix_all(bufnr, timeout)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    return false
  end
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = 0, character = 0 } },
    context = { diagnostics = {}, only = { 'source.fixAll.graphmend' } },
  }
  local response = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', params, timeout or 30000)
  local answer = response and response[client.id]
  local action = answer and answer.result and answer.result[1]
  if not action then
    vim.notify('GraphMend: nothing to fix safely in this file', vim.log.levels.INFO)
    return false
  end
  vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
  return true
end

local function commands()
  local define = vim.api.nvim_create_user_command
  define('GraphMendMendWorkspace', function()
    local result = M.execute('graphmend.mendWorkspace')
    if result then
      vim.cmd('silent! wall')
    end
  end, { desc = 'GraphMend: apply every safe fix in the workspace and save' })
  define('GraphMendCheckWorkspace', function()
    M.execute('graphmend.checkWorkspace')
  end, { desc = 'GraphMend: diagnostics for the files that are not open' })
  define('GraphMendFixAll', function()
    M.fix_all()
  end, { desc = 'GraphMend: apply every safe fix in this buffer' })
end

function M.setup(opts)
  opts = vim.tbl_deep_extend('force', M.defaults, opts or {})
  local config = {
    name = M.name,
    cmd = opts.cmd,
    init_options = opts.settings,
    settings = { graphmend = opts.settings },
  }
  if vim.lsp.config and vim.lsp.enable then -- Neovim 0.11+
    config.filetypes = { 'python' }
    config.root_markers = opts.root_markers
    vim.lsp.config(M.name, config)
    vim.lsp.enable(M.name)
  else -- Neovim 0.7 - 0.10: one client per root directory, attached on FileType python
    local by_root = {}
    vim.api.nvim_create_autocmd('FileType', {
      pattern = 'python',
      callback = function(args)
        local bufnr = args.buf
        local root = root_of(bufnr, opts.root_markers)
        local id = by_root[root]
        if not id or not vim.lsp.get_client_by_id(id) then
          id = vim.lsp.start_client(vim.tbl_extend('force', config, {
            root_dir = root,
            workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
          }))
          by_root[root] = id
        end
        if id then
          vim.lsp.buf_attach_client(bufnr, id)
        end
      end,
    })
  end
  commands()
end

return M
