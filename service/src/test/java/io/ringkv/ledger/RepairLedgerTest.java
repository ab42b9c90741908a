package io.ringkv.ledger;

import static io.ringkv.support.TestStores.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Set;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ringkv.record.Record;
import io.ringkv.storage.HintStore;
import io.ringkv.storage.MetaStore;
import io.ringkv.storage.RocksStore;
import io.ringkv.storage.TokenIndex;
import io.ringkv.storage.TombstoneIndex;
import io.ringkv.support.TestStores;

/** What a store remembers of its node's membership across restarts, and the volume of a node that left. */
class RepairLedgerTest {

    @TempDir
    Path dir;

    private RocksStore store;

    private RocksStore reopen() {
        if (store != null) {
            store.close();
        }
        store = TestStores.open(dir);
        return store;
    }

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
    }

    @Test
    void aNewStoreHasNotJoinedAndRemembersOnceItHas() {
        RepairLedger ledger = new RepairLedger(reopen());
        assertThat(ledger.joined()).isFalse();
        ledger.markJoined();
        store.apply(bytes("k"), Record.value(1, bytes("v"))).join();
        assertThat(new RepairLedger(reopen()).joined()).isTrue();
    }

    @Test
    void dataFromBeforeJoinsWereRecordedIsAMembersData() {
        reopen().apply(bytes("k"), Record.value(1, bytes("v"))).join();
        RepairLedger ledger = new RepairLedger(reopen());
        assertThat(ledger.joined()).isTrue();
        assertThat(store.get(bytes("k"))).isPresent();
    }

    /** A restart in the middle of a join: what it took so far is not a member's data, and the join starts again. */
    @Test
    void aStoreStillJoiningIsNotAMembersEvenWithRecords() {
        RepairLedger ledger = new RepairLedger(reopen());
        ledger.markJoining();
        store.apply(bytes("half-pulled"), Record.value(1, bytes("v"))).join();
        assertThat(new RepairLedger(reopen()).joined()).isFalse();
        assertThat(store.get(bytes("half-pulled"))).as("kept: the next pull moves only what differs").isPresent();

        new RepairLedger(reopen()).markJoined();
        assertThat(new RepairLedger(reopen()).joined()).isTrue();
    }

    @Test
    void theVolumeOfANodeThatLeftIsClearedWhenItComesBack() {
        RepairLedger ledger = new RepairLedger(reopen());
        ledger.markJoined();
        store.apply(bytes("deleted-later"), Record.value(1, bytes("old"))).join();
        store.apply(bytes("tombstone"), Record.tombstone(2)).join();
        new HintStore(store).put(bytes("hint-1"), bytes("a write for a peer")).join();
        ledger.repaired("http://peer:1", 100);
        ledger.markLeft().join();

        RepairLedger back = new RepairLedger(reopen());
        assertThat(store.get(bytes("deleted-later"))).as("could resurrect a delete the cluster has since purged").isEmpty();
        assertThat(store.get(bytes("tombstone"))).isEmpty();
        assertThat(store.isEmpty()).isTrue();
        assertThat(new TokenIndex(store).digest(Long.MIN_VALUE, Long.MAX_VALUE).keys()).as("the token index too").isZero();
        assertThat(new TombstoneIndex(store).purgeTombstonesBefore(Long.MAX_VALUE).total()).as("and the tombstones' index").isZero();
        assertThat(new HintStore(store).page(new byte[0], null, 10)).as("hints of old writes, which could resurrect too").isEmpty();
        assertThat(back.joined()).as("it joins like a new node").isFalse();
        assertThat(back.lastRepairMillis("http://peer:1")).isZero();
        assertThat(new RepairLedger(reopen()).joined()).as("cleared once, not on every start").isFalse();
    }

    /**
     * A store found behind its peers' purges while its join was still pulling (PurgeHorizonCheck)
     * is marked left; the join finishing after that must not make it a member's again: seen on CI,
     * where the node then served, and its peers' repairs pulled the deleted values back.
     */
    @Test
    void aStoreMarkedLeftIsNotJoinedAgainBeforeARestartClearsIt() {
        RepairLedger ledger = new RepairLedger(reopen());
        store.apply(bytes("deleted-elsewhere"), Record.value(1, bytes("old"))).join();
        ledger.markLeft().join();

        assertThat(ledger.markJoined()).as("a join that finished after the mark").isFalse();
        assertThat(ledger.joined()).isFalse();
        assertThat(ledger.markedLeft()).isTrue();
        RepairLedger restarted = new RepairLedger(reopen());
        assertThat(store.get(bytes("deleted-elsewhere"))).as("cleared at the restart").isEmpty();
        assertThat(restarted.markJoined()).as("after the restart it joins like a new node").isTrue();
    }

    @Test
    void repairsAPeerRanAreRecordedUnderItsNameAndOldEntriesWithAddressesAreDropped() {
        RepairLedger ledger = new RepairLedger(reopen());
        ledger.repaired("http://peer:1", 100);
        new MetaStore(store).put("repaired", "http://peer:1=100\nhttp://peer:2 at /10.0.0.7:41234=200"
                .getBytes(java.nio.charset.StandardCharsets.UTF_8)).join();

        RepairLedger back = new RepairLedger(reopen());
        assertThat(back.lastRepairs()).isEqualTo(java.util.Map.of("http://peer:1", 100L));
        assertThat(new RepairLedger(reopen()).lastRepairs()).as("saved without it").isEqualTo(java.util.Map.of("http://peer:1", 100L));
    }

    @Test
    void theMembersThatHeldDataAreRememberedAcrossARestart() {
        RepairLedger ledger = new RepairLedger(reopen());
        assertThat(ledger.heldData("http://b:8080")).isFalse();
        ledger.rememberDataHolders(Set.of("http://a:8080", "http://b:8080", "http://bad\nname:8080"));
        RepairLedger restarted = new RepairLedger(reopen());
        assertThat(restarted.heldData("http://b:8080")).isTrue();
        assertThat(restarted.heldData("http://c:8080")).isFalse();
        assertThat(restarted.heldData("http://bad\nname:8080")).as("a name that would break the format is not kept").isFalse();
        restarted.rememberDataHolders(Set.of("http://a:8080"));
        assertThat(new RepairLedger(reopen()).heldData("http://b:8080")).as("scaled away: forgotten").isFalse();
    }

    /** The members' zones outlive a restart; what is read back is a member's zone, or skipped. */
    @Test
    void theMembersZonesAreRememberedAcrossARestartAndAnUnreadableLineIsSkipped() {
        RepairLedger ledger = new RepairLedger(reopen());
        assertThat(ledger.zoneOf("http://b:8080")).isEmpty();
        ledger.rememberZones(java.util.Map.of("http://a:8080", "zone-a", "http://b=:8080", "zone-b", "http://bad\nname:8080", "zone-c"));
        RepairLedger restarted = new RepairLedger(reopen());
        assertThat(restarted.zoneOf("http://a:8080")).contains("zone-a");
        assertThat(restarted.zoneOf("http://b=:8080")).as("a name with the separator in it").contains("zone-b");
        assertThat(restarted.zoneOf("http://bad\nname:8080")).as("a name that would break the format is not kept").isEmpty();

        new MetaStore(store).put("zones", bytes("http%3A%2F%2Fa%3A8080=zone-a\nhttp%3A%2F%2Fc%3A8080=<script>\ngarbage\nhttp%zz=zone-d")).join();
        RepairLedger tampered = new RepairLedger(reopen());
        assertThat(tampered.zoneOf("http://a:8080")).contains("zone-a");
        assertThat(tampered.zoneOf("http://c:8080")).as("not a zone's form").isEmpty();
    }

    /** No name breaks the ledger's lines, and a store with a line it cannot read still opens. */
    @Test
    void noNameBreaksTheLedgerAndAnUnreadableLineIsSkipped() {
        RepairLedger ledger = new RepairLedger(reopen());
        String hostile = "http://a:1=5\nhttp://b:1=99999999999999\n=";
        ledger.repaired(hostile, 7);
        ledger.repaired("http://node-1:8080", 11);
        assertThat(new RepairLedger(reopen()).lastRepairs()).containsOnly(
                java.util.Map.entry(hostile, 7L), java.util.Map.entry("http://node-1:8080", 11L));

        new MetaStore(store).put("repaired", bytes("http://node-1:8080=12\ngarbage\nhttp://x:1=notanumber\n=3\nhttp://bad%zz:1=4")).join();
        assertThat(new RepairLedger(reopen()).lastRepairs()).as("the readable line of a ledger written before names were encoded")
                .containsOnly(java.util.Map.entry("http://node-1:8080", 12L));
    }
}
