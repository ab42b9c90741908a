package io.ringkv.config;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.micrometer.core.instrument.MeterRegistry;
import io.ringkv.overload.AdmissionControl;

/** Wires the bounds on the public API's work: requests and bytes of values in progress at once. */
@Configuration(proxyBeanMethods = false)
public class OverloadConfiguration {

    @Bean
    AdmissionControl admissionControl(RingkvProperties properties, MeterRegistry meters) {
        var overload = properties.overload();
        return new AdmissionControl(overload.maxClientRequests(), overload.maxBytesInFlight().toBytes(), meters);
    }
}
