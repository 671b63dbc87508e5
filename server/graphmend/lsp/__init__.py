"""The language server: pygls wiring over the analyser (`analysis/`) and the rewrites (`rewrite/`)."""
