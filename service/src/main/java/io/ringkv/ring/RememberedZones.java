package io.ringkv.ring;

import java.util.Map;
import java.util.Optional;

/**
 * The zones of the ring's members as this node last knew them, remembered across restarts
 * ({@code ledger.RepairLedger} keeps them). Placement depends on every member's zone, and a member
 * tells its zone only when it answers: a node that restarts while a peer is down must still place
 * that peer's keys as the others do, so a member not heard from yet is in the zone remembered for it.
 */
public interface RememberedZones {

    /** Remembers nothing: a node without a store (tests), and the start of a new cluster. */
    RememberedZones NONE = new RememberedZones() {
        @Override
        public Optional<String> zoneOf(String member) {
            return Optional.empty();
        }

        @Override
        public void rememberZones(Map<String, String> zones) {
        }
    };

    /** The zone the member was in when this node last knew its ring, if it had one. */
    Optional<String> zoneOf(String member);

    /** The ring's members that have a zone, with it: what is remembered from now on. */
    void rememberZones(Map<String, String> zones);
}
