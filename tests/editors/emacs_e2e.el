;;; Batch Emacs 28 + eglot (Debian elpa-eglot) against `graphmend lsp`.
;;; GRAPHMEND_PY=... GRAPHMEND_FILE=... emacs --batch -Q -l emacs_e2e.el
(dolist (d (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (add-to-list 'load-path d))                       ; -Q skips Debian's elpa activation
(require 'eglot)
(require 'python)
(setq eglot-confirm-server-initiated-edits nil)     ; no y-or-n-p in batch

(defun graphmend-wait (pred secs)
  (let ((deadline (+ (float-time) secs)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (funcall pred)))

(defun graphmend-pick (_prompt collection &rest _)
  "Answer eglot's code action menu with the torch.where rewrite."
  (or (seq-find (lambda (title) (string-match-p "torch.where" title))
                (mapcar (lambda (c) (if (consp c) (car c) c)) collection))
      (error "no torch.where action offered")))

(condition-case err
    (let ((py (getenv "GRAPHMEND_PY")) (file (getenv "GRAPHMEND_FILE")))
      (add-to-list 'eglot-server-programs `(python-mode . (,py "-m" "graphmend" "lsp")))
      (find-file file)
      (python-mode)
      (apply #'eglot (eglot--guess-contact))
      (unless (graphmend-wait (lambda () (flymake-diagnostics)) 20)
        (flymake-start)                             ; batch: nudge flymake to take eglot's reports
        (unless (graphmend-wait (lambda () (flymake-diagnostics)) 10)
          (error "no diagnostics")))
      (let ((d (car (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b)))))))
        (message "diagnostic: %s" (flymake-diagnostic-text d))
        (goto-char (flymake-diagnostic-beg d)))
      (let ((last-nonmenu-event 13))                ; a key, not a mouse click: the menu is completing-read
        (cl-letf (((symbol-function 'completing-read) #'graphmend-pick))
          (eglot-code-actions (point) (point) nil t)))
      (unless (graphmend-wait (lambda () (save-excursion (goto-char (point-min)) (search-forward "torch.where" nil t))) 10)
        (error "the quick fix was not applied"))
      (save-buffer)
      ;; eglot 1.9 asks before editing files no buffer visits: the user says yes
      (cl-letf (((symbol-function 'y-or-n-p) (lambda (&rest _) t)))
        (message "mendWorkspace: %S"
                 (eglot-execute-command (eglot-current-server) 'graphmend.mendWorkspace [])))
      (save-some-buffers t)
      (eglot-shutdown (eglot-current-server))
      (message "OK")
      (kill-emacs 0))
  (error (message "FAILED: %S" err) (kill-emacs 1)))
