package io.ringkv.repair;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import io.ringkv.record.KeyedRecord;
import io.ringkv.record.LastWriteWins;
import io.ringkv.ring.HashRing;

/**
 * Which keys two replicas must exchange, from their versions of one token interval: each side's
 * keys in token order, then key order (the order of the token index), with versions only. A key
 * this side holds newer, or alone, is pushed; one the other side holds newer, or alone, is pulled.
 * Plain Java: a merge join, tested directly.
 */
public final class VersionDiff {

    /** The keys to send to the other replica, and those to fetch from it. */
    public record Result(List<byte[]> push, List<byte[]> pull) {
        public int size() {
            return push.size() + pull.size();
        }
    }

    private VersionDiff() {
    }

    public static Result of(List<KeyedRecord> local, List<KeyedRecord> remote) {
        List<byte[]> push = new ArrayList<>();
        List<byte[]> pull = new ArrayList<>();
        int l = 0;
        int r = 0;
        while (l < local.size() || r < remote.size()) {
            int order = l == local.size() ? 1 : r == remote.size() ? -1 : compare(local.get(l).key(), remote.get(r).key());
            if (order < 0) {
                push.add(local.get(l++).key());
            } else if (order > 0) {
                pull.add(remote.get(r++).key());
            } else {
                int newer = LastWriteWins.ORDER.compare(local.get(l).record(), remote.get(r).record());
                if (newer > 0) {
                    push.add(local.get(l).key());
                } else if (newer < 0) {
                    pull.add(remote.get(r).key());
                }
                l++;
                r++;
            }
        }
        return new Result(push, pull);
    }

    /** The token index's order: by token (signed), then by key (unsigned bytes). */
    static int compare(byte[] a, byte[] b) {
        int byToken = Long.compare(HashRing.token(a), HashRing.token(b));
        return byToken != 0 ? byToken : Arrays.compareUnsigned(a, b);
    }
}
