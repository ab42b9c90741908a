package io.ringkv.lifecycle;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * A value made from files, made again when they change: the node's certificates, the client
 * tokens. The files are read at start, where a failure stops the node, and again every period on
 * a scheduler for blocking work, never an event loop.
 *
 * <p>Files are compared by content, not by modification time: a Kubernetes Secret volume swaps a
 * symbolic link to a new directory, which leaves the links' own times unchanged. What is kept to
 * compare is the subclass's {@link #fingerprint}, so a secret content need not stay in memory.
 * Files that cannot be read or made into a value (a rotation caught half written, a broken file)
 * leave the value in force, and are reported once, not every round.
 *
 * @param <C> what is read from the files
 * @param <V> the value made from it
 */
public abstract class WatchedFiles<C, V> extends PeriodicTask {

    private static final Logger log = LoggerFactory.getLogger(WatchedFiles.class);

    private final Duration period;
    private final Scheduler blocking;
    private volatile V current;
    /** The fingerprint of the content {@link #current} was made from. */
    private volatile Object inForce;
    /** The fingerprint of the content last refused, or why the files could not be read; null if none since. */
    private volatile Object lastRefused;

    protected WatchedFiles(Duration period, Scheduler blocking) {
        this.period = period;
        this.blocking = blocking;
    }

    /** Reads the files (blocking); fails with why, safe to log. */
    protected abstract C read();

    /** What contents are compared by ({@link Object#equals}). */
    protected abstract Object fingerprint(C content);

    /** The value the content makes; fails with why, safe to log, if it makes none. */
    protected abstract V make(C content);

    /** A new value is in force, on the thread that read it. */
    protected abstract void taken(V before, V after);

    /** New files could not be used, told once per content; {@code inForce} stays. */
    protected abstract void refused(String why, V inForce);

    /** Reads the files and makes the first value; a failure is thrown, for the node not to start. */
    protected final V load() {
        C content = read();
        current = make(content);
        inForce = fingerprint(content);
        return current;
    }

    /** The value of the files as last read whole. */
    public final V current() {
        return current;
    }

    /** Reads the files and takes them if they changed and make a value. Blocking, as every round is. */
    public final void check() {
        C content;
        try {
            content = read();
        } catch (RuntimeException e) {
            refuse(why(e), why(e));
            return;
        }
        Object seen = fingerprint(content);
        if (seen.equals(inForce)) {
            // Unchanged, or back to what is in force after a refusal: a later refusal is news again.
            lastRefused = null;
            return;
        }
        if (seen.equals(lastRefused)) {
            return;
        }
        V next;
        try {
            next = make(content);
        } catch (RuntimeException e) {
            refuse(seen, why(e));
            return;
        }
        V before = current;
        current = next;
        inForce = seen;
        lastRefused = null;
        taken(before, next);
    }

    private static String why(RuntimeException e) {
        return e.getMessage() != null ? e.getMessage() : e.toString();
    }

    private void refuse(Object seen, String why) {
        if (!seen.equals(lastRefused)) {
            lastRefused = seen;
            refused(why, current);
        }
    }

    @Override
    protected Disposable begin() {
        return everyPeriod(period, blocking, () -> Mono.fromRunnable(this::check),
                error -> log.warn("checking the files of {} failed", getClass().getSimpleName(), error))
                .subscribe();
    }
}
