package io.ringkv.repair;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.replication.LastWriteWins;
import io.ringkv.ring.HashRing;
import io.ringkv.storage.Record;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.StorageSettings;

/** What a store remembers of its node's membership across restarts, and the volume of a node that left. */
class RepairLedgerTest {

    @TempDir
    Path dir;

    private RocksStore store;

    private RocksStore reopen() {
        if (store != null) {
            store.close();
        }
        store = RocksStore.open(new StorageSettings(dir, 8 * 1024 * 1024, false, 10_000, HashRing::token), LastWriteWins.ORDER);
        return store;
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    private static byte[] b(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aNewStoreHasNotJoinedAndRemembersOnceItHas() {
        RepairLedger ledger = new RepairLedger(reopen());
        assertThat(ledger.joined()).isFalse();
        ledger.markJoined();
        store.apply(b("k"), Record.value(1, b("v"))).join();
        assertThat(new RepairLedger(reopen()).joined()).isTrue();
    }

    @Test
    void dataFromBeforeJoinsWereRecordedIsAMembersData() {
        reopen().apply(b("k"), Record.value(1, b("v"))).join();
        RepairLedger ledger = new RepairLedger(reopen());
        assertThat(ledger.joined()).isTrue();
        assertThat(store.get(b("k"))).isPresent();
    }

    @Test
    void theVolumeOfANodeThatLeftIsClearedWhenItComesBack() {
        RepairLedger ledger = new RepairLedger(reopen());
        ledger.markJoined();
        store.apply(b("deleted-later"), Record.value(1, b("old"))).join();
        store.apply(b("tombstone"), Record.tombstone(2)).join();
        ledger.repaired("http://peer:1", 100);
        ledger.markLeft();

        RepairLedger back = new RepairLedger(reopen());
        assertThat(store.get(b("deleted-later"))).as("could resurrect a delete the cluster has since purged").isEmpty();
        assertThat(store.get(b("tombstone"))).isEmpty();
        assertThat(store.isEmpty()).isTrue();
        assertThat(store.digest(Long.MIN_VALUE, Long.MAX_VALUE).keys()).as("the token index too").isZero();
        assertThat(back.joined()).as("it joins like a new node").isFalse();
        assertThat(back.lastRepairMillis("http://peer:1")).isZero();
        assertThat(new RepairLedger(reopen()).joined()).as("cleared once, not on every start").isFalse();
    }
}
