package io.ringkv.hints;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.ledger.RepairLedger;
import io.ringkv.replication.ReplicaDirectory;
import io.ringkv.settings.RingkvProperties;
import io.ringkv.storage.RocksStore;
import reactor.core.scheduler.Scheduler;

/** Hinted hand-off: the coordinator's {@code replication.HintedHandoff}, kept in the store and replayed. */
@Configuration(proxyBeanMethods = false)
public class HintsConfiguration {

    @Bean
    Hints hints(RocksStore store, Scheduler storageScheduler, ReplicaDirectory replicaDirectory, RepairLedger repairLedger,
            RingkvProperties properties, MeterRegistry meters) {
        var hints = properties.hints();
        var settings = new Hints.Settings(hints.window(), hints.maxSize().toBytes(), hints.replayRate().toBytes());
        return new Hints(store, storageScheduler, settings, name -> Hints.Recipient.of(replicaDirectory.remote(name)), repairLedger,
                System::currentTimeMillis, meters);
    }
}
