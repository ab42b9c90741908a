# Sourced by loadtest/ab.sh, loadtest/ycsb.sh and loadtest/rebuild.sh: CPU time, in clock ticks (getconf CLK_TCK a
# second), read from /proc before and after a measured run.
# shellcheck shell=bash

# The processes' own time (utime + stime of every thread).
cpu_ticks() { # pid...
  local sum=0 pid
  for pid in "$@"; do sum=$((sum + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done
  echo "$sum"
}

# The part of it the JIT compilers' threads spent: on two shared cores they still compile a
# minute and a half into a run, more for the build with more new code, so it is shown apart. A
# compiler thread the JVM ends during the run takes its ticks with it (a slight undercount).
compiler_ticks() { # pid...
  local sum=0 pid task
  for pid in "$@"; do
    for task in /proc/"$pid"/task/*; do
      [[ $(cat "$task/comm" 2>/dev/null) == C[12]\ Compiler* ]] || continue
      sum=$((sum + $(sed 's/.*) //' "$task/stat" 2>/dev/null | awk '{print $12 + $13}')))
    done
  done
  echo "$sum"
}

# The whole machine's busy time (user, nice, system, irq, softirq): less the measured processes',
# it is what the client (wrk) and the kernel's network path spent on the same cores.
machine_ticks() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
