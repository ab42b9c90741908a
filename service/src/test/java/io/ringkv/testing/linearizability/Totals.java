package io.ringkv.testing.linearizability;

import java.util.Collection;

/** How many operations a history holds, of each kind and by result: what a test logs beside a verdict. */
public record Totals(int reads, int writes, int ok, int failed, int unknown) {

    public static Totals of(Collection<? extends Operation> operations) {
        int reads = 0;
        int ok = 0;
        int failed = 0;
        int unknown = 0;
        for (Operation operation : operations) {
            if (operation instanceof Operation.Read) {
                reads++;
            }
            switch (operation.result()) {
                case OK -> ok++;
                case FAILED -> failed++;
                case UNKNOWN -> unknown++;
            }
        }
        return new Totals(reads, operations.size() - reads, ok, failed, unknown);
    }

    public int operations() {
        return reads + writes;
    }

    public int count(Result result) {
        return switch (result) {
            case OK -> ok;
            case FAILED -> failed;
            case UNKNOWN -> unknown;
        };
    }

    @Override
    public String toString() {
        return "%d operations (%d reads, %d writes): %d OK, %d failed, %d unknown".formatted(operations(), reads, writes, ok, failed, unknown);
    }
}
