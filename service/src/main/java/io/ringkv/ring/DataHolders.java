package io.ringkv.ring;

import java.util.Set;

/**
 * Which members held data when this node last knew its ring, remembered across restarts
 * ({@code ledger.RepairLedger} keeps it). With a StatefulSet deciding the members, one that is
 * down keeps its ranges: after a restart this node presumes a member holds data if it did when
 * this node last knew, until the member says otherwise.
 */
public interface DataHolders {

    /** Whether the member held data (NORMAL or LEAVING) when this node last knew its ring. */
    boolean heldData(String member);

    /** The members that hold data now, to be remembered. */
    void rememberDataHolders(Set<String> holders);
}
