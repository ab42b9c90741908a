"""The application contract of the ringkv chart's renders, which helm lint and the Kubernetes schemas
cannot know: one module per concern (workload, secret, memory, volumes, rbac, departure, netpol,
hooktest, loadtest, backup, values_schema), render.py runs them on one render, teeth.py (backup.py
for its own) proves that they fail on broken copies. helm/verify.sh runs it as
`python3 -m contract MODE ...` (see __main__.py)."""
