package io.ringkv.ledger;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.ringkv.storage.RocksStore;

/** The ledger, read from the store at start (a store whose node had left is cleared then). */
@Configuration(proxyBeanMethods = false)
public class LedgerConfiguration {

    @Bean
    RepairLedger repairLedger(RocksStore store) {
        return new RepairLedger(store);
    }
}
