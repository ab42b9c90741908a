package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class BackupCatalogTest {

    private static final List<String> MEMBERS = List.of("http://10.0.0.1:8080", "http://10.0.0.2:8080", "http://10.0.0.3:8080");

    private final List<BackupStore.Stored> listing = new ArrayList<>();
    private final Map<String, BackupStarted> started = new HashMap<>();

    /** A backup begun with every member, of which {@code done} stored their manifests. */
    private void backup(String id, List<String> done) {
        started.put(id, new BackupStarted(BackupStarted.FORMAT, id, 0, MEMBERS.getFirst(), MEMBERS));
        listing.add(new BackupStore.Stored(BackupLayout.started(id), 100));
        for (String member : done) {
            listing.add(new BackupStore.Stored(BackupLayout.node(id, member) + "MANIFEST-000005", 10));
            listing.add(new BackupStore.Stored(BackupLayout.manifest(id, member), 10));
        }
    }

    private BackupCatalog catalog() {
        return BackupCatalog.of(listing, id -> Optional.ofNullable(started.get(id)));
    }

    private static List<String> ids(List<BackupCatalog.Entry> entries) {
        return entries.stream().map(BackupCatalog.Entry::id).toList();
    }

    @Test
    void aBackupIsCompleteOnceEveryMemberStoredItsManifest() {
        backup("2026-11-01T00-00-00Z", MEMBERS);
        backup("2026-11-02T00-00-00Z", MEMBERS.subList(0, 2));
        listing.add(new BackupStore.Stored("files/identity/000012.sst", 4096));

        BackupCatalog catalog = catalog();

        assertThat(ids(catalog.entries())).containsExactly("2026-11-01T00-00-00Z", "2026-11-02T00-00-00Z");
        assertThat(catalog.find("2026-11-01T00-00-00Z").orElseThrow().complete()).isTrue();
        BackupCatalog.Entry partial = catalog.find("2026-11-02T00-00-00Z").orElseThrow();
        assertThat(partial.complete()).isFalse();
        assertThat(partial.missing()).containsExactly(MEMBERS.get(2));
        assertThat(catalog.newestComplete().orElseThrow().id()).isEqualTo("2026-11-01T00-00-00Z");
    }

    @Test
    void aBackupWithoutItsStartRecordIsNeverComplete() {
        listing.add(new BackupStore.Stored(BackupLayout.manifest("2026-11-01T00-00-00Z", MEMBERS.getFirst()), 10));

        assertThat(catalog().entries()).singleElement().satisfies(entry -> assertThat(entry.complete()).isFalse());
    }

    @Test
    void retentionKeepsTheNewestCompleteBackupsAndDropsIncompleteOnesOlderThanThem() {
        backup("2026-11-01T00-00-00Z", MEMBERS);
        backup("2026-11-02T00-00-00Z", List.of());
        backup("2026-11-03T00-00-00Z", MEMBERS);
        backup("2026-11-04T00-00-00Z", MEMBERS);
        backup("2026-11-05T00-00-00Z", MEMBERS.subList(0, 1));

        assertThat(ids(catalog().expired(2))).containsExactly("2026-11-01T00-00-00Z", "2026-11-02T00-00-00Z");
        assertThat(ids(catalog().expired(3))).containsExactly("2026-11-02T00-00-00Z");
        assertThat(ids(catalog().expired(5))).containsExactly("2026-11-02T00-00-00Z");
    }

    @Test
    void retentionRemovesNothingWhileNoBackupIsComplete() {
        backup("2026-11-01T00-00-00Z", List.of());
        backup("2026-11-02T00-00-00Z", MEMBERS.subList(0, 2));

        assertThat(catalog().expired(1)).isEmpty();
    }

    @Test
    void aRestoreWithoutAPointInTimeStreamsTheBackupAlone() {
        backup("2026-11-01T00-00-00Z", MEMBERS);
        backup("2026-11-02T00-00-00Z", MEMBERS);

        assertThat(ids(catalog().restoreChain("2026-11-02T00-00-00Z", Optional.empty()))).containsExactly("2026-11-02T00-00-00Z");
    }

    @Test
    void aPointInTimeAddsTheEarlierCompleteBackupsBackToTheLastOneBeforeIt() {
        backup("2026-11-01T00-00-00Z", MEMBERS);
        backup("2026-11-02T00-00-00Z", MEMBERS);
        backup("2026-11-02T12-00-00Z", MEMBERS.subList(0, 1));
        backup("2026-11-03T00-00-00Z", MEMBERS);
        backup("2026-11-04T00-00-00Z", MEMBERS);

        BackupCatalog catalog = catalog();

        assertThat(ids(catalog.restoreChain("2026-11-04T00-00-00Z", Optional.of(Instant.parse("2026-11-02T06:00:00Z")))))
                .containsExactly("2026-11-02T00-00-00Z", "2026-11-03T00-00-00Z", "2026-11-04T00-00-00Z");
        assertThat(ids(catalog.restoreChain("2026-11-03T00-00-00Z", Optional.of(Instant.parse("2026-11-03T00:00:00Z")))))
                .containsExactly("2026-11-03T00-00-00Z");
        // Before every backup: all of them, the oldest holding the most of that time.
        assertThat(ids(catalog.restoreChain("2026-11-02T00-00-00Z", Optional.of(Instant.parse("2026-10-01T00:00:00Z")))))
                .containsExactly("2026-11-01T00-00-00Z", "2026-11-02T00-00-00Z");
    }

    @Test
    void aRestoreOfAMissingOrIncompleteBackupIsRefusedWithWhy() {
        backup("2026-11-01T00-00-00Z", MEMBERS.subList(0, 2));
        BackupCatalog catalog = catalog();

        assertThatThrownBy(() -> catalog.restoreChain("2026-11-09T00-00-00Z", Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("no backup 2026-11-09T00-00-00Z");
        assertThatThrownBy(() -> catalog.restoreChain("2026-11-01T00-00-00Z", Optional.empty()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("incomplete").hasMessageContaining(MEMBERS.get(2));
    }

    @Test
    void idsSortAsTimeAndAreCheckedBeforeUse() {
        String id = BackupLayout.idAt(Instant.parse("2026-11-29T16:31:05.900Z"));

        assertThat(id).isEqualTo("2026-11-29T16-31-05Z");
        assertThat(BackupLayout.startOf(id)).isEqualTo(Instant.parse("2026-11-29T16:31:05Z"));
        assertThat(BackupLayout.isId(id)).isTrue();
        assertThat(BackupLayout.isId("../../etc")).isFalse();
        assertThat(BackupLayout.isId("2026-11-29T16-31-05Z/../x")).isFalse();
    }

    @Test
    void tableFilesAreSharedUnderTheStoreIdentityAndTheRestBelongToTheBackup() {
        assertThat(BackupLayout.object("2026-11-29T16-31-05Z", "http://10.0.0.1:8080", "id-1", "000042.sst"))
                .isEqualTo("files/id-1/000042.sst");
        assertThat(BackupLayout.object("2026-11-29T16-31-05Z", "http://10.0.0.1:8080", "id-1", "MANIFEST-000012"))
                .isEqualTo("backups/2026-11-29T16-31-05Z/nodes/http---10.0.0.1-8080/MANIFEST-000012");
    }
}
