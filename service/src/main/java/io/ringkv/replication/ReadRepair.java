package io.ringkv.replication;

import java.util.List;
import java.util.Optional;

import io.ringkv.record.LastWriteWins;
import io.ringkv.record.Record;


/**
 * What a read's answers say about its replicas: the newest version (tombstones included, so a
 * missed delete is repaired too) and the replicas that hold an older one or none. Pure, so the
 * rule is tested directly; the coordinator writes the newest version back to the stale ones.
 */
public final class ReadRepair {

    /** One replica's answer to a read. */
    public record Answer<R>(R replica, Optional<Record> record) {
    }

    /** The newest version, and who needs it. */
    public record Plan<R>(Optional<Record> newest, List<R> stale) {
        public boolean needed() {
            return !stale.isEmpty();
        }
    }

    private ReadRepair() {
    }

    public static <R> Plan<R> plan(List<Answer<R>> answers) {
        Optional<Record> newest = LastWriteWins.newest(answers.stream().map(Answer::record).toList());
        if (newest.isEmpty()) {
            return new Plan<>(newest, List.of());
        }
        List<R> stale = answers.stream()
                .filter(answer -> isStale(answer.record(), newest.get()))
                .map(Answer::replica)
                .toList();
        return new Plan<>(newest, stale);
    }

    /** Whether an answer is older than the newest version known. */
    public static boolean isStale(Optional<Record> answer, Record newest) {
        return answer.isEmpty() || LastWriteWins.ORDER.compare(answer.get(), newest) < 0;
    }
}
