-- Headless Neovim (0.7 and 0.11) against `graphmend lsp`, set up with editors/neovim/graphmend.lua
-- exactly as the README says. Environment: GRAPHMEND_REPO, GRAPHMEND_PY, GRAPHMEND_FILE (a model
-- with a fixable branch), GRAPHMEND_OTHER (a closed file for "mend whole workspace").
local function log(...) io.stderr:write(table.concat(vim.tbl_map(tostring, { ... }), ' ') .. '\n') end

local function ours(bufnr)
  return vim.tbl_filter(function(d) return d.source == 'graphmend' end, vim.diagnostic.get(bufnr))
end

local function main()
  package.path = os.getenv('GRAPHMEND_REPO') .. '/editors/neovim/?.lua;' .. package.path
  local graphmend = require('graphmend')
  vim.cmd('filetype on') -- -u NONE turns filetype detection off
  graphmend.setup({ cmd = { os.getenv('GRAPHMEND_PY'), '-m', 'graphmend', 'lsp' }, settings = { debounceMs = 20 } })

  -- 1) open the model; wait for GraphMend's diagnostics (pushed to 0.7, pulled by 0.11)
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('GRAPHMEND_FILE')))
  local bufnr = vim.api.nvim_get_current_buf()
  assert(vim.wait(20000, function() return #ours(bufnr) >= 2 end, 50), 'no diagnostics within 20 s')
  local first = ours(bufnr)[1]
  log('diagnostics:', #ours(bufnr), first.code or (first.user_data and first.user_data.lsp.code), first.lnum, first.col)

  -- 2) the user's quick fix: cursor on the branch, vim.lsp.buf.code_action(), pick the rewrite
  local chosen
  vim.ui.select = function(items, opts, on_choice)
    for index, item in ipairs(items) do
      local action = item.action or item[2]
      if action.title:find('torch.where', 1, true) then
        chosen = action.title
        return on_choice(item, index)
      end
    end
    on_choice(nil, nil)
  end
  vim.api.nvim_win_set_cursor(0, { first.lnum + 1, first.col })
  vim.lsp.buf.code_action()
  assert(vim.wait(20000, function()
    return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n'):find('torch.where', 1, true) ~= nil
  end, 50), 'the quick fix was not applied')
  log('applied:', chosen)
  vim.cmd('write')

  -- 3) "mend whole workspace": the server sends workspace/applyEdit, Neovim applies it, we save
  local result = graphmend.execute('graphmend.mendWorkspace', bufnr, 60000)
  assert(result and result.applied, 'mendWorkspace failed: ' .. vim.inspect(result))
  log('mendWorkspace:', vim.inspect(result))
  vim.cmd('silent! wall')

  local client = graphmend.client(bufnr)
  client.stop()
  vim.wait(5000, function() return vim.lsp.get_client_by_id(client.id) == nil end, 50)
end

local ok, err = pcall(main)
if ok then
  log('OK')
  vim.cmd('qall!')
else
  log('FAILED:', err)
  vim.cmd('cquit 1')
end
