package io.ringkv.replication;

import java.util.ArrayList;
import java.util.List;

/**
 * Counts the answers of the replicas of one request and says when the request is decided:
 * as soon as {@code ack} replicas succeeded, or as soon as so many failed that {@code ack} can
 * no longer be reached, or when its time is up. Later answers change nothing. Thread-safe: replicas answer on any thread.
 */
public final class QuorumCollector<T> {

    public enum Outcome { PENDING, REACHED, FAILED }

    private final int ack;
    private final int from;
    private final List<T> answers = new ArrayList<>();
    private int failures;
    private Outcome outcome = Outcome.PENDING;

    public QuorumCollector(ReplicationFactor factor) {
        this.ack = factor.ack();
        this.from = factor.from();
    }

    /**
     * Records a successful answer.
     *
     * @return {@link Outcome#REACHED} exactly once, on the answer that decides the request;
     *         {@link Outcome#PENDING} otherwise
     */
    public synchronized Outcome success(T answer) {
        if (!isDecided()) {
            answers.add(answer);
        }
        return decide(answers.size() >= ack, Outcome.REACHED);
    }

    /**
     * Records a failed or timed-out replica.
     *
     * @return {@link Outcome#FAILED} exactly once, when {@code ack} successes became impossible;
     *         {@link Outcome#PENDING} otherwise
     */
    public synchronized Outcome failure() {
        if (!isDecided()) {
            failures++;
        }
        return decide(from - failures < ack, Outcome.FAILED);
    }

    /**
     * The request's time is up.
     *
     * @return {@link Outcome#FAILED} if it was still undecided (exactly once); {@link Outcome#PENDING}
     *         if it had been decided already
     */
    public synchronized Outcome expire() {
        return decide(true, Outcome.FAILED);
    }

    /**
     * The request ended for a reason of its own (its client left, or this node refused it): later
     * answers change nothing, and its caller asks no more replicas.
     *
     * @return whether it was still undecided, so that it ends exactly once
     */
    public synchronized boolean abandon() {
        return decide(true, Outcome.FAILED) == Outcome.FAILED;
    }

    /**
     * Decides the request {@code way} if it is still undecided and {@code decisive} holds; the
     * one place an outcome is set, so that a request is decided exactly once.
     *
     * @return {@code way} on the call that decided it, {@link Outcome#PENDING} otherwise
     */
    private Outcome decide(boolean decisive, Outcome way) {
        if (isDecided() || !decisive) {
            return Outcome.PENDING;
        }
        outcome = way;
        return way;
    }

    /** Whether the request is decided, either way. */
    public synchronized boolean isDecided() {
        return outcome != Outcome.PENDING;
    }

    /** Whether {@code ack} replicas succeeded: only then do later answers still matter (read repair). */
    public synchronized boolean reached() {
        return outcome == Outcome.REACHED;
    }

    /** The successful answers that decided the request. */
    public synchronized List<T> answers() {
        return List.copyOf(answers);
    }
}
