package io.ringkv.tls;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.ringkv.support.TestCertificates;

/** A peer is let in by a certificate for the host of a member's name, and by nothing else. */
class PeerIdentityTest {

    private static final List<String> MEMBERS = List.of("https://ringkv-0.ringkv-headless.db.svc:8080",
            "https://10.0.0.7:8080", "https://[::1]:8080");

    @Test
    void theCertificatesDnsNamesAndAddressesAreItsHosts() {
        var ca = new TestCertificates.Authority("test CA");
        var certificate = ca.issue("not a host", "Ringkv-0.ringkv-headless.db.svc", "10.0.0.7", "::1").certificate();

        assertThat(PeerIdentity.hosts(certificate)).as("the common name is no host; DNS names in lower case")
                .containsExactlyInAnyOrder("ringkv-0.ringkv-headless.db.svc", "10.0.0.7", "0:0:0:0:0:0:0:1");
    }

    @Test
    void aMembersHostLetsThePeerIn() {
        assertThat(PeerIdentity.isMember(Set.of("ringkv-0.ringkv-headless.db.svc"), MEMBERS)).isTrue();
        assertThat(PeerIdentity.isMember(Set.of("10.0.0.7"), MEMBERS)).isTrue();
        assertThat(PeerIdentity.isMember(Set.of("0:0:0:0:0:0:0:1"), MEMBERS)).as("::1 spelled out").isTrue();
        assertThat(PeerIdentity.isMember(Set.of("other.example", "10.0.0.7"), MEMBERS)).as("one of several").isTrue();
    }

    @Test
    void noMembersHostKeepsThePeerOut() {
        assertThat(PeerIdentity.isMember(Set.of(), MEMBERS)).as("no names at all").isFalse();
        assertThat(PeerIdentity.isMember(Set.of("ringkv-1.ringkv-headless.db.svc"), MEMBERS)).as("another pod").isFalse();
        assertThat(PeerIdentity.isMember(Set.of("*.other-headless.db.svc"), MEMBERS)).as("a wildcard for other names").isFalse();
        assertThat(PeerIdentity.isMember(Set.of("*.db.svc"), MEMBERS)).as("a wildcard one label too high").isFalse();
        assertThat(PeerIdentity.isMember(Set.of("*"), MEMBERS)).as("a bare wildcard").isFalse();
        assertThat(PeerIdentity.isMember(Set.of("10.0.0.70"), MEMBERS)).as("a longer address").isFalse();
        assertThat(PeerIdentity.isMember(Set.of("ringkv-0.ringkv-headless.db.svc"), List.of())).as("no members").isFalse();
    }

    /** The chart gives every pod one certificate, for *.<release>-headless.<namespace>.svc.cluster.local. */
    @Test
    void aWildcardNamesEveryHostOneLabelBelowIt() {
        assertThat(PeerIdentity.names(Set.of("*.ringkv-headless.db.svc"), "ringkv-0.ringkv-headless.db.svc")).isTrue();
        assertThat(PeerIdentity.names(Set.of("*.ringkv-headless.db.svc"), "a.ringkv-0.ringkv-headless.db.svc")).isFalse();
        assertThat(PeerIdentity.names(Set.of("*.ringkv-headless.db.svc"), "ringkv-headless.db.svc")).isFalse();
        assertThat(PeerIdentity.names(Set.of("*.0.0.1"), "127.0.0.1")).as("no wildcard names an address").isFalse();
    }

    @Test
    void hostsAreComparedInOneSpelling() {
        assertThat(PeerIdentity.hostOf("https://RINGKV-0.Ringkv-Headless.db.svc.:8080")).isEqualTo("ringkv-0.ringkv-headless.db.svc");
        assertThat(PeerIdentity.hostOf("https://[0:0::1]:8080")).isEqualTo("0:0:0:0:0:0:0:1");
        assertThat(PeerIdentity.hostOf("not a url")).isNull();
    }
}
