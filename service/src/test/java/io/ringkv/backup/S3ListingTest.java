package io.ringkv.backup;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Which keys of a bucket's listing {@link S3BackupStore} takes for objects; without a server. */
class S3ListingTest {

    @Test
    void aKeyIsAnObjectUnderThePrefixWhenTheStoreCouldHaveWrittenIt() {
        assertThat(S3BackupStore.objectName("ringkv/", "ringkv/backups/2026-11-01T00-00-00Z/backup.json"))
                .contains("backups/2026-11-01T00-00-00Z/backup.json");
        assertThat(S3BackupStore.objectName("", "files/x/000012.sst")).contains("files/x/000012.sst");
    }

    @Test
    void aKeyPlantedInTheBucketThatNoObjectNameMakesIsNoObject() {
        for (String key : List.of("ringkv/backups/../../x", "ringkv/backups/./x", "ringkv//x", "ringkv/backups/", "ringkv/", "other/x",
                "ringkv/backups/.hidden")) {
            assertThat(S3BackupStore.objectName("ringkv/", key)).as(key).isEmpty();
        }
    }
}
