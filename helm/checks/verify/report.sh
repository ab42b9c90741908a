# shellcheck shell=bash
# Sourced by helm/verify.sh: counts the checks and prints one line per check, a failure with the
# first lines of what explains it, and a summary that fails the run when any check failed.
# Needs WORK (a scratch directory); contract and run_checker need PYTHON and CHECKS (helm/checks).

PASSED=0
FAILED=0
SKIPPED=0
FAILED_NAMES=()

pass() { PASSED=$((PASSED + 1)); printf '  PASS  %s\n' "$1"; }

# fail NAME [DETAIL_FILE]
fail() {
  FAILED=$((FAILED + 1)); FAILED_NAMES+=("$1"); printf '  FAIL  %s\n' "$1"
  if [ -n "${2:-}" ] && [ -s "$2" ]; then head -n 25 "$2" | sed 's/^/          | /'; fi
}

skip() { SKIPPED=$((SKIPPED + 1)); printf '  SKIP  %s\n' "$1"; }

section() { printf '\n== %s\n' "$*"; }

# The application contract's checker (helm/checks/contract, a Python package), run from helm/checks so
# that it is the package python finds first (the arguments are absolute paths).
contract() { (cd "$CHECKS" && "$PYTHON" -m contract "$@"); }

# run_checker MODE ARGS...: the checker's "PASS<TAB>name" / "FAIL<TAB>name<TAB>detail" lines as checks.
run_checker() {
  local status name detail
  if ! contract "$@" >"$WORK/checker.out" 2>&1; then
    fail "checker exited with an error" "$WORK/checker.out"
    return
  fi
  while IFS=$'\t' read -r status name detail; do
    case "$status" in
      PASS) pass "$name" ;;
      FAIL) printf '%s\n' "$detail" >"$WORK/detail"; fail "$name" "$WORK/detail" ;;
      *) fail "unexpected checker output: $status $name" ;;
    esac
  done <"$WORK/checker.out"
}

# must_succeed NAME CMD...: the command must succeed; its output explains a failure.
must_succeed() {
  local name=$1; shift
  if "$@" >"$WORK/cmd.out" 2>&1; then pass "$name"; else fail "$name" "$WORK/cmd.out"; fi
}

# must_fail NAME REGEX CMD...: the command must fail and its output match REGEX.
must_fail() {
  local name=$1 regex=$2; shift 2
  if "$@" >"$WORK/cmd.out" 2>&1; then
    fail "$name (command succeeded)"
  elif grep -Eq -- "$regex" "$WORK/cmd.out"; then
    pass "$name"
  else
    fail "$name (failed, but not with /$regex/)" "$WORK/cmd.out"
  fi
}

# must_find_nothing NAME CMD...: the command (a search) must find nothing; what it found explains a failure.
must_find_nothing() {
  local name=$1; shift
  if "$@" >"$WORK/found.out" 2>&1; then fail "$name" "$WORK/found.out"; else pass "$name"; fi
}

# summary: the counts; exits 1 when a check failed.
summary() {
  section "summary"
  echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
  if [ "$FAILED" -gt 0 ]; then
    printf 'failed checks:\n'
    printf '  - %s\n' "${FAILED_NAMES[@]}"
    exit 1
  fi
  echo "all checks passed"
}
