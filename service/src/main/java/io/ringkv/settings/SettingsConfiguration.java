package io.ringkv.settings;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Configuration;

/** Binds {@link RingkvProperties} for every capability's configuration to read. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(RingkvProperties.class)
public class SettingsConfiguration {
}
