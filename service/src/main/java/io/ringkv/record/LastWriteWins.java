package io.ringkv.record;

import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;


/**
 * The conflict rule: the version with the newer timestamp wins. Two coordinators can stamp the
 * same timestamp, so ties break the same way on every node: a tombstone beats a value (a delete
 * that raced a write is not undone), then the greater value in unsigned byte order, then the
 * later expiry (never expiring is the latest). Whether a value has expired plays no part: an
 * expired value still hides every older version.
 */
public final class LastWriteWins implements Comparator<Record> {

    public static final LastWriteWins ORDER = new LastWriteWins();

    private LastWriteWins() {
    }

    @Override
    public int compare(Record a, Record b) {
        int byTime = Long.compare(a.timestamp(), b.timestamp());
        if (byTime != 0) {
            return byTime;
        }
        if (a.tombstone() != b.tombstone()) {
            return a.tombstone() ? 1 : -1;
        }
        int byValue = a.compareValues(b);
        if (byValue != 0) {
            return byValue;
        }
        return Long.compare(lifeEnd(a), lifeEnd(b));
    }

    private static long lifeEnd(Record record) {
        return record.expiresAt() == Record.NEVER ? Long.MAX_VALUE : record.expiresAt();
    }

    /** The newest of the replicas' answers; an absent record (empty) loses to any record. */
    public static Optional<Record> newest(Collection<Optional<Record>> answers) {
        return answers.stream().flatMap(Optional::stream).max(ORDER);
    }
}
