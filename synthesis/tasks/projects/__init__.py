"""Tasks over project folders (issue 41): work that reads files, computes and writes.

`scenarios` draws the kinds in turn over one folder; `work` is what a task is; each further
module holds kinds of one domain (`ledger_reports`: reports computed from the ledgers).
"""
