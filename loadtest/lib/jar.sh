# Sourced by loadtest/run.sh and loadtest/bulk-load.sh (after bin/lib/common.sh): the ringkv jar a
# benchmark runs, and the copy of it its nodes run.
# shellcheck shell=bash

# Sets jar: $JAR as it is, or service/target/ringkv.jar, built when it is missing or older than
# the sources (never with NO_BUILD=1). Then copies it to DATA-DIR/ringkv.jar and sets node_jar:
# the nodes run the copy, so that a rebuild during the benchmark cannot change the jar under them.
find_jar() { # data-dir
  if [ -n "${JAR:-}" ]; then
    [ -f "$JAR" ] || die "JAR=$JAR: no such file"
    jar=$JAR
    log "jar: $jar (JAR is set: nothing is built)"
  else
    jar=service/target/ringkv.jar
    if [ "${NO_BUILD:-0}" != 1 ]; then
      if [ ! -f "$jar" ] || [ -n "$(find pom.xml service/pom.xml service/src/main -newer "$jar" -type f -print -quit)" ]; then
        step "building $jar (it is missing or older than the sources)"
        bin/with-jdk ./mvnw -B -q -DskipTests package
      else
        log "$jar is up to date"
      fi
    fi
    [ -f "$jar" ] || die "no $jar: build it with bin/with-jdk ./mvnw -B -DskipTests package"
  fi
  node_jar=$1/ringkv.jar
  cp "$jar" "$node_jar"
}

# One random cluster secret per benchmark, given to every ringkv node (internal calls carry it).
random_secret() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }
